"""What a secured local node needs from lawindex: its own certificates, users and the least-privilege role.

The security plugin's demo configuration is a reference, not something to ship: its certificates and
passwords are public. Here every secured node gets a CA of its own, a node certificate signed by it (for
HTTP and transport TLS), an admin client certificate (the plugin's super-admin DN), an `admin` user and a
`lawindex` user whose role allows what lawindex's commands do to the indices of its namespace and
nothing more. Passwords are random, written only to files readable by their owner, and never printed.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import secrets
import string
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The role that lawindex's commands need on a secured cluster, and nothing more. Every permission is one
# a command was seen to need on OpenSearch 2.19.4 with the security plugin, found by taking each away and
# running tests/integration/test_secure.py (load, a reload, ask, --family, get, status and verify as a
# user holding only this role); each one taken away failed a command:
#
# - cluster: `GET /` (cluster:monitor/main) and the health a load waits on before it moves an alias
#   (cluster:monitor/health); bulk, which the plugin authorises at cluster level before the indices;
# - indices of the namespace: create and delete its generations, look for orphans (admin/get), read
#   the ownership mapping (mappings/get), move and read aliases, refresh (refresh and its per-shard
#   refresh[s]), search/get/count (data/read), write laws (data/write), map the statistics document's
#   vocabulary blocks as the dynamic template adds them (admin/mapping/put); on the plugin path
#   (indexer.opensearch.cluster.plugin_path) merge a new generation to one segment before its swap
#   (admin/forcemerge). The role has no cluster:monitor/nodes/info: a load finds the lawindex plugin
#   by the node parsing its query (indexer.opensearch.cluster.plugins.query_parses), not by listing the nodes.
ROLE_NAME = "lawindex"
CLUSTER_PERMISSIONS = (
    "cluster:monitor/main",
    "cluster:monitor/health",
    "indices:data/write/bulk",
)
INDEX_ACTIONS = (
    "indices:admin/create",
    "indices:admin/delete",
    "indices:admin/get",
    "indices:admin/mappings/get",
    "indices:admin/mapping/put",
    "indices:admin/aliases",
    "indices:admin/aliases/get",
    "indices:admin/refresh*",
    "indices:admin/forcemerge*",
    "indices:data/read/*",
    "indices:data/write/*",
)


def index_patterns(namespace: str = "lawindex") -> list[str]:
    """The names lawindex makes in `namespace`, and nothing else, as the security plugin's index patterns
    (a pattern in slashes is a Java regular expression, matched whole): each state's alias (`lawindex-tx`),
    its generations (`lawindex-tx-<20 digits>`) and their private `-filling` aliases, the lock index and
    its alias. `lawindex-*` let the user read and delete another tool's `lawindex-staging-tx-1`. Every
    name lawindex gives an index or alias must match one of these (tests/unit/test_security.py)."""
    from indexer.opensearch.cluster.connection import namespace_of
    from indexer.opensearch.trust.ownership import GENERATION_DIGITS
    from indexer.opensearch.write.lock import locks_concrete_index, locks_index

    states = f"{namespace_of(namespace)}-[a-z]{{2}}"
    generations = f"(-[0-9]{{{GENERATION_DIGITS}}}(-filling)?)?"
    return [f"/{states}{generations}/", locks_index(namespace), locks_concrete_index(namespace)]


def role(namespace: str = "lawindex") -> dict[str, Any]:
    """The least-privilege role for lawindex on the indices and aliases of `namespace`, as roles.yml holds it."""
    return {
        "reserved": False,
        "description": f"lawindex: load, ask and verify the road-law indices of the namespace {namespace}",
        "cluster_permissions": list(CLUSTER_PERMISSIONS),
        "index_permissions": [{"index_patterns": index_patterns(namespace), "allowed_actions": list(INDEX_ACTIONS)}],
        "tenant_permissions": [],
    }


@dataclass(frozen=True)
class Certificates:
    """The PEM files of a secured node, in its config directory (paths relative to it, as the plugin reads)."""

    directory: Path
    ca: Path
    node: Path
    node_key: Path
    admin: Path
    admin_key: Path
    node_dn: str
    admin_dn: str


_NODE_DN = "CN=lawindex-node,OU=node,O=lawindex"
_ADMIN_DN = "CN=lawindex-admin,OU=admin,O=lawindex"


def _name(dn: str) -> Any:
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    oids = {"CN": NameOID.COMMON_NAME, "OU": NameOID.ORGANIZATIONAL_UNIT_NAME, "O": NameOID.ORGANIZATION_NAME}
    # RFC 4514 writes the most specific part first; the certificate holds them most general first.
    parts = [part.split("=", 1) for part in dn.split(",")]
    return x509.Name([x509.NameAttribute(oids[key], value) for key, value in reversed(parts)])


def _write_private(path: Path, data: bytes) -> None:
    """Write `data` to `path`, readable by its owner only, from the first byte on."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)


def certificates_in(directory: Path) -> Certificates:
    """The certificates `make_certificates` writes into `directory` (or copied there from where it wrote them)."""
    return Certificates(
        directory=directory,
        ca=directory / "lawindex-ca.pem",
        node=directory / "lawindex-node.pem",
        node_key=directory / "lawindex-node-key.pem",
        admin=directory / "lawindex-admin.pem",
        admin_key=directory / "lawindex-admin-key.pem",
        node_dn=_NODE_DN,
        admin_dn=_ADMIN_DN,
    )


def make_certificates(
    directory: Path, hosts: Iterable[str] = ("127.0.0.1", "localhost"), days: int = 825
) -> Certificates:
    """A CA, a node certificate for `hosts` (HTTP and transport), and an admin client certificate, signed by
    the CA, written as PEM into `directory` (keys PKCS#8, unencrypted, mode 600: the plugin reads PKCS#8)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import ExtendedKeyUsageOID

    now = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=5)
    until = now + dt.timedelta(days=days)

    def key() -> rsa.RSAPrivateKey:
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def pem_key(private: rsa.RSAPrivateKey) -> bytes:
        return private.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )

    ca_key = key()
    ca_name = _name("CN=lawindex-ca,OU=ca,O=lawindex")
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(until)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )

    def signed(dn: str, private: rsa.RSAPrivateKey, usages: list[Any], names: list[Any]) -> x509.Certificate:
        builder = (
            x509.CertificateBuilder()
            .subject_name(_name(dn))
            .issuer_name(ca_name)
            .public_key(private.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now)
            .not_valid_after(until)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        )
        if names:
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        return builder.sign(ca_key, hashes.SHA256())

    alternative: list[Any] = []
    for host in hosts:
        try:
            alternative.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            alternative.append(x509.DNSName(host))
    node_key = key()
    # A node certificate serves both sides of transport TLS, so it is a server and a client certificate.
    node = signed(_NODE_DN, node_key, [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH], alternative)
    admin_key = key()
    admin = signed(_ADMIN_DN, admin_key, [ExtendedKeyUsageOID.CLIENT_AUTH], [])

    directory.mkdir(parents=True, exist_ok=True)
    found = certificates_in(directory)
    found.ca.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    found.node.write_bytes(node.public_bytes(serialization.Encoding.PEM))
    found.admin.write_bytes(admin.public_bytes(serialization.Encoding.PEM))
    _write_private(found.node_key, pem_key(node_key))
    _write_private(found.admin_key, pem_key(admin_key))
    return found


def node_settings(certificates: Certificates) -> dict[str, str | list[str] | bool]:
    """The opensearch.yml settings of a node secured with `certificates` (file names relative to config/)."""
    return {
        "plugins.security.ssl.transport.pemcert_filepath": certificates.node.name,
        "plugins.security.ssl.transport.pemkey_filepath": certificates.node_key.name,
        "plugins.security.ssl.transport.pemtrustedcas_filepath": certificates.ca.name,
        "plugins.security.ssl.transport.enforce_hostname_verification": False,
        "plugins.security.ssl.http.enabled": True,
        "plugins.security.ssl.http.pemcert_filepath": certificates.node.name,
        "plugins.security.ssl.http.pemkey_filepath": certificates.node_key.name,
        "plugins.security.ssl.http.pemtrustedcas_filepath": certificates.ca.name,
        "plugins.security.authcz.admin_dn": [certificates.admin_dn],
        "plugins.security.nodes_dn": [certificates.node_dn],
        # The security index is made from config/opensearch-security/*.yml on the first start: the files
        # written by `write_config`, with this node's own users, not the demo's.
        "plugins.security.allow_default_init_securityindex": True,
        "plugins.security.restapi.roles_enabled": ["all_access"],
        "plugins.security.audit.type": "noop",
        "plugins.security.check_snapshot_restore_write_privileges": True,
        "plugins.security.enable_snapshot_restore_privilege": True,
    }


def password(length: int = 24) -> str:
    """A random password that meets the plugin's default strength rule (upper, lower, digit, special)."""
    alphabet = string.ascii_letters + string.digits
    while True:
        core = "".join(secrets.choice(alphabet) for _ in range(length - 1))
        if any(c.isupper() for c in core) and any(c.islower() for c in core) and any(c.isdigit() for c in core):
            return core + secrets.choice("-_.")


def password_hash(secret: str) -> str:
    """The BCrypt hash the plugin's internal users database keeps ($2y$, cost 12, as its hash.sh makes)."""
    import bcrypt

    hashed = bcrypt.hashpw(secret.encode(), bcrypt.gensalt(rounds=12)).decode()
    return "$2y$" + hashed[4:]


def security_config(
    admin_password: str, lawindex_password: str, namespace: str = "lawindex"
) -> dict[str, dict[str, Any]]:
    """The security plugin's configuration files by name: basic auth against internal users only, an
    `admin` mapped to all_access, and a `lawindex` user mapped to the least-privilege role alone."""

    def meta(kind: str) -> dict[str, Any]:
        return {"_meta": {"type": kind, "config_version": 2}}

    return {
        "config.yml": {
            **meta("config"),
            "config": {
                "dynamic": {
                    "http": {"anonymous_auth_enabled": False},
                    # A wildcard (`lawindex-*`, as status and the orphan search ask) resolves to the indices
                    # the user may see, instead of refusing the whole request when another tool's index
                    # (`lawindex-staging-tx-1`) matches it too.
                    "do_not_fail_on_forbidden": True,
                    "authc": {
                        "basic_internal_auth_domain": {
                            "description": "HTTP basic auth against the internal users database",
                            "http_enabled": True,
                            "transport_enabled": True,
                            "order": 0,
                            "http_authenticator": {"type": "basic", "challenge": True},
                            "authentication_backend": {"type": "intern"},
                        }
                    },
                    "authz": {},
                }
            },
        },
        "internal_users.yml": {
            **meta("internalusers"),
            "admin": {
                "hash": password_hash(admin_password),
                "reserved": True,
                "backend_roles": ["admin"],
                "description": "the node's administrator (lawindex opensearch start --secure)",
            },
            # Reserved: the plugin refuses a change to a reserved user from anyone but the super admin (the
            # admin certificate), so the user cannot change its own password through the account API
            # (PUT _plugins/_security/api/account, 403): whoever holds credentials.env could otherwise
            # lock the operator out, and every command would get 401.
            ROLE_NAME: {
                "hash": password_hash(lawindex_password),
                "reserved": True,
                "description": "lawindex's least-privileged user",
            },
        },
        "roles.yml": {**meta("roles"), ROLE_NAME: role(namespace)},
        "roles_mapping.yml": {
            **meta("rolesmapping"),
            "all_access": {"reserved": False, "backend_roles": ["admin"], "description": "the node's administrator"},
            ROLE_NAME: {"reserved": False, "users": [ROLE_NAME], "description": "lawindex's own user"},
        },
        "action_groups.yml": meta("actiongroups"),
        "tenants.yml": meta("tenants"),
        "nodes_dn.yml": meta("nodesdn"),
    }


def write_config(directory: Path, files: dict[str, dict[str, Any]]) -> None:
    """Write the security configuration files as YAML (JSON is YAML) into `directory`, owner-readable only:
    the internal users' hashes are in them."""
    import json

    for name, body in files.items():
        _write_private(directory / name, (json.dumps(body, indent=2) + "\n").encode())


@dataclass(frozen=True)
class Secrets:
    """A secured cluster's secrets in one folder: the certificates (`*.pem`), the admin's password, the
    OPENSEARCH_USER/OPENSEARCH_PASSWORD lines of the `lawindex` user, the security configuration."""

    directory: Path

    @property
    def ca(self) -> Path:
        return self.directory / "lawindex-ca.pem"

    @property
    def credentials(self) -> Path:
        return self.directory / "credentials.env"

    @property
    def admin_password(self) -> Path:
        return self.directory / "admin.password"

    @property
    def config(self) -> Path:
        return self.directory / "opensearch-security"


def cluster_secrets(directory: Path) -> Secrets:
    """The secrets of a secured cluster kept in `directory`, made there on first use (new certificates and
    passwords whenever one of them is missing) and the same at every later start."""
    found = Secrets(directory)
    directory.mkdir(parents=True, exist_ok=True)
    if not found.ca.is_file() or not found.credentials.is_file() or not found.admin_password.is_file():
        make_certificates(directory)
        admin, own = password(), password()
        _write_private(found.admin_password, (admin + "\n").encode())
        _write_private(found.credentials, f"OPENSEARCH_USER={ROLE_NAME}\nOPENSEARCH_PASSWORD={own}\n".encode())
        write_config(found.config, security_config(admin, own))
    return found
