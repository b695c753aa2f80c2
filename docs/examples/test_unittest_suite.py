"""The same kind of suite with unittest and no pytest (docs/testing.md):
`python -m unittest test_unittest_suite`."""

import unittest
from datetime import timedelta

import mockkube


class ClusterTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cluster = mockkube.Cluster().start()  # the demo cluster, in this process

    @classmethod
    def tearDownClass(cls):
        cls.cluster.stop()

    def setUp(self):
        self.cluster.reset()  # every test starts from the initial state

    def test_configmap(self):
        ns = self.cluster.create_namespace()
        self.cluster.kubectl("create", "configmap", "settings", "-n", ns, "--from-literal=mode=fast")
        self.assertEqual(self.cluster.get("configmap", "settings", ns)["data"], {"mode": "fast"})

    def test_clock(self):
        now = self.cluster.clock.now()
        later = self.cluster.clock.advance(timedelta(hours=2))
        self.assertGreaterEqual(later - now, timedelta(hours=2))

    def test_nothing_left_from_other_tests(self):
        names = self.cluster.kubectl("get", "namespaces", "-o", "name").stdout.split()
        self.assertFalse([n for n in names if n.startswith("namespace/test-")])


if __name__ == "__main__":
    unittest.main()
