"""ServiceAccount tokens: signed JWTs as kube-apiserver issues them (bound tokens from the
TokenRequest subresource, legacy tokens for ``kubernetes.io/service-account-token``
Secrets) and the claims that identify their holder. Pure: lookups are the caller's."""

from __future__ import annotations

import base64
import hashlib
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any

ISSUER = "https://kubernetes.default.svc.cluster.local"  # kind's and kubeadm's --service-account-issuer
LEGACY_ISSUER = "kubernetes/serviceaccount"
EXTRA = "authentication.kubernetes.io/"
MIN_EXPIRATION = 600  # seconds: upstream refuses shorter TokenRequests


def _algorithm(key) -> str:
    from cryptography.hazmat.primitives.asymmetric import ec

    return "ES256" if isinstance(key, ec.EllipticCurvePrivateKey) else "RS256"


class Signer:
    """Signs and verifies one server's tokens (``--service-account-signing-key-file``, else a
    key made when the first token is signed or checked: tokens then end with the process).

    PyJWT and cryptography are imported then too: a tenth of a second of the server's
    start-up, spent only by servers that hand out tokens."""

    def __init__(self, key_pem: bytes | None = None, issuer: str = ISSUER) -> None:
        self.issuer = issuer
        self._key: Any = None
        self._kid = ""
        self._lock = threading.Lock()  # the API's loop and the components' loop both sign
        if key_pem:  # a key file that is not a key fails the start, as kube-apiserver's flag
            from cryptography.hazmat.primitives import serialization

            self._key = serialization.load_pem_private_key(key_pem, password=None)

    @property
    def key(self) -> Any:
        if self._key is None:
            with self._lock:
                if self._key is None:
                    from cryptography.hazmat.primitives.asymmetric import ec

                    self._key = ec.generate_private_key(ec.SECP256R1())
        return self._key

    @property
    def algorithm(self) -> str:
        return _algorithm(self._key) if self._key is not None else "ES256"  # the generated key is P-256

    @property
    def kid(self) -> str:
        if not self._kid:
            from cryptography.hazmat.primitives import serialization

            der = self.key.public_key().public_bytes(
                serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
            )
            # upstream's key id: the unpadded base64url SHA-256 of the public key's DER
            self._kid = base64.urlsafe_b64encode(hashlib.sha256(der).digest()).rstrip(b"=").decode()
        return self._kid

    def sign(self, claims: dict) -> str:
        import jwt

        return jwt.encode(claims, self.key, algorithm=self.algorithm, headers={"kid": self.kid})

    def jwks(self) -> dict:
        """The public key set of ServiceAccount issuer discovery (``/openid/v1/jwks``)."""
        from jwt.algorithms import ECAlgorithm, RSAAlgorithm

        algo = ECAlgorithm if self.algorithm == "ES256" else RSAAlgorithm
        key = algo.to_jwk(self.key.public_key(), as_dict=True)
        key.update({"use": "sig", "kid": self.kid, "alg": self.algorithm})
        return {"keys": [key]}

    def openid_configuration(self, jwks_uri: str) -> dict:
        """``/.well-known/openid-configuration`` as kube-apiserver serves it."""
        return {
            "issuer": self.issuer,
            "jwks_uri": jwks_uri,
            "response_types_supported": ["id_token"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": [self.algorithm],
        }

    def verify(self, token: str, now: float) -> dict | None:
        """The claims of a token this signer made that is valid at ``now`` (the cluster
        clock's time), or None: bad signature, expired or not yet valid, not ours."""
        import jwt

        try:
            claims = jwt.decode(
                token,
                self.key.public_key(),
                algorithms=[self.algorithm],
                options={"verify_aud": False, "verify_exp": False, "verify_nbf": False, "verify_iat": False},
            )
        except jwt.PyJWTError:
            return None
        if claims.get("iss") not in (self.issuer, LEGACY_ISSUER):
            return None
        if "exp" in claims and not now < claims["exp"]:
            return None
        if "nbf" in claims and now < claims["nbf"] - 60:  # upstream's clock-skew leeway
            return None
        return claims


@dataclass
class Bound:
    """What a bound token names besides its ServiceAccount."""

    pod: tuple[str, str] | None = None  # (name, uid)
    secret: tuple[str, str] | None = None
    node: tuple[str, str] | None = None


def bound_claims(
    issuer: str,
    namespace: str,
    sa: tuple[str, str],
    audiences: list[str],
    expiration: int,
    bound: Bound,
    now: float | None = None,
) -> dict:
    """Claims of a TokenRequest token (upstream serviceaccount.Claims)."""
    now = int(now if now is not None else time.time())
    k8s: dict = {"namespace": namespace, "serviceaccount": {"name": sa[0], "uid": sa[1]}}
    for field, ref in (("pod", bound.pod), ("secret", bound.secret), ("node", bound.node)):
        if ref is not None:
            k8s[field] = {"name": ref[0], "uid": ref[1]}
    return {
        "aud": audiences,
        "exp": now + expiration,
        "iat": now,
        "nbf": now,
        "iss": issuer,
        "jti": str(uuid.uuid4()),
        "kubernetes.io": k8s,
        "sub": f"system:serviceaccount:{namespace}:{sa[0]}",
    }


def legacy_claims(namespace: str, sa: tuple[str, str], secret_name: str) -> dict:
    """Claims of a token a legacy ServiceAccount token Secret holds (no expiry)."""
    return {
        "iss": LEGACY_ISSUER,
        "kubernetes.io/serviceaccount/namespace": namespace,
        "kubernetes.io/serviceaccount/secret.name": secret_name,
        "kubernetes.io/serviceaccount/service-account.name": sa[0],
        "kubernetes.io/serviceaccount/service-account.uid": sa[1],
        "sub": f"system:serviceaccount:{namespace}:{sa[0]}",
    }


def user_info(claims: dict) -> dict:
    """The userInfo a valid token authenticates as."""
    if "kubernetes.io" in claims:
        k = claims["kubernetes.io"]
        ns, name, uid = k["namespace"], k["serviceaccount"]["name"], k["serviceaccount"]["uid"]
    else:
        ns = claims["kubernetes.io/serviceaccount/namespace"]
        name = claims["kubernetes.io/serviceaccount/service-account.name"]
        uid = claims["kubernetes.io/serviceaccount/service-account.uid"]
        k = {}
    extra: dict[str, list[str]] = {}
    if claims.get("jti"):
        extra[EXTRA + "credential-id"] = [f"JTI={claims['jti']}"]
    for field in ("node", "pod"):
        if k.get(field):
            extra[f"{EXTRA}{field}-name"] = [k[field]["name"]]
            extra[f"{EXTRA}{field}-uid"] = [k[field]["uid"]]
    user = {
        "username": f"system:serviceaccount:{ns}:{name}",
        "uid": uid,
        "groups": ["system:serviceaccounts", f"system:serviceaccounts:{ns}", "system:authenticated"],
    }
    if extra:
        user["extra"] = dict(sorted(extra.items()))
    return user
