"""A validating admission webhook as a Deployment runs one: HTTPS with the certificate in
/tls (a Secret), on $PORT; it refuses pods labelled deny=true and allows the rest."""

import http.server
import json
import os
import ssl


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        req = review["request"]
        labels = (req.get("object") or {}).get("metadata", {}).get("labels") or {}
        response = {"uid": req["uid"], "allowed": labels.get("deny") != "true"}
        if not response["allowed"]:
            response["status"] = {"code": 403, "message": f"denied by {os.environ['HOSTNAME']}"}
        body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body.encode())
        print(f"{req['operation']} {req['kind']['kind']} {req.get('name', '')}: {response['allowed']}", flush=True)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain("/tls/tls.crt", "/tls/tls.key")
server.socket = ctx.wrap_socket(server.socket, server_side=True)
server.serve_forever()
