// @kubernetes/client-node against a secured mockkube: argv[2] is the admin's kubeconfig,
// argv[3] a ServiceAccount's. Prints one JSON line with what each could do.
import * as k8s from '@kubernetes/client-node';

function api(path) {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(path);
  return kc.makeApiClient(k8s.CoreV1Api);
}

const out = {};
const admin = api(process.argv[2]);
out.namespaces = (await admin.listNamespace()).items.map((n) => n.metadata.name).sort();
await admin.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'from-node' }, data: { a: 'b' } } });
out.created = (await admin.readNamespacedConfigMap({ name: 'from-node', namespace: 'default' })).data.a;
const sa = api(process.argv[3]);
out.saConfigMaps = (await sa.listNamespacedConfigMap({ namespace: 'default' })).items.length > 0;
try {
  await sa.listNamespacedSecret({ namespace: 'default' });
  out.saSecrets = 'allowed';
} catch (e) {
  out.saSecrets = e.code;
  out.saSecretsMessage = JSON.parse(e.body).message;
}
console.log(JSON.stringify(out));
