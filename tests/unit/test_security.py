"""indexer.node.security: the certificates, users and role of a secured local node, checked with the tools a
TLS client and the security plugin use, not with the code that made them."""

from __future__ import annotations

import ssl
import stat
from pathlib import Path

import bcrypt
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.x509.verification import PolicyBuilder, Store

from indexer.node import security


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> security.Certificates:
    return security.make_certificates(tmp_path_factory.mktemp("certs"), hosts=("127.0.0.1", "localhost"))


def _load(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def test_node_certificate_verifies_for_the_loopback_names(certificates: security.Certificates) -> None:
    store = Store([_load(certificates.ca)])
    for name in ("127.0.0.1", "localhost"):
        subject = x509.IPAddress(__import__("ipaddress").ip_address(name)) if name[0].isdigit() else x509.DNSName(name)
        verifier = PolicyBuilder().store(store).build_server_verifier(subject)
        chain = verifier.verify(_load(certificates.node), [])
        assert chain[-1] == _load(certificates.ca)
    # And for no other host: a certificate for any name would be no check at all.
    verifier = PolicyBuilder().store(store).build_server_verifier(x509.DNSName("example.com"))
    with pytest.raises(x509.verification.VerificationError):
        verifier.verify(_load(certificates.node), [])


def test_python_ssl_accepts_the_ca_and_the_node_pair(certificates: security.Certificates) -> None:
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(certificates.node, certificates.node_key)  # raises if key and certificate differ
    client = ssl.create_default_context(cafile=str(certificates.ca))
    assert client.verify_mode == ssl.CERT_REQUIRED


def test_keys_are_pkcs8_and_private(certificates: security.Certificates) -> None:
    for key in (certificates.node_key, certificates.admin_key):
        text = key.read_bytes()
        # The plugin reads PKCS#8 ("BEGIN PRIVATE KEY"), not PKCS#1 ("BEGIN RSA PRIVATE KEY").
        assert text.startswith(b"-----BEGIN PRIVATE KEY-----")
        serialization.load_pem_private_key(text, password=None)
        assert stat.S_IMODE(key.stat().st_mode) == 0o600


def test_admin_dn_in_settings_is_the_admin_certificate_subject(certificates: security.Certificates) -> None:
    settings = security.node_settings(certificates)
    assert settings["plugins.security.authcz.admin_dn"] == [_load(certificates.admin).subject.rfc4514_string()]
    assert settings["plugins.security.nodes_dn"] == [_load(certificates.node).subject.rfc4514_string()]


def test_password_hashes_check_with_bcrypt() -> None:
    secret = security.password()
    hashed = security.password_hash(secret)
    assert hashed.startswith("$2y$12$")
    assert bcrypt.checkpw(secret.encode(), ("$2b$" + hashed[4:]).encode())
    assert not bcrypt.checkpw(b"wrong", ("$2b$" + hashed[4:]).encode())


def test_passwords_meet_the_plugin_strength_rule() -> None:
    import re

    rule = re.compile(r"(?=.*[A-Z])(?=.*[^a-zA-Z\d])(?=.*[0-9])(?=.*[a-z]).{8,}")
    assert all(rule.fullmatch(security.password()) for _ in range(200))
    assert len({security.password() for _ in range(50)}) == 50


def test_the_lawindex_user_holds_only_its_role_on_its_namespace() -> None:
    files = security.security_config("Admin-pw1.", "Lawindex-pw1.", namespace="staging")
    mapping = files["roles_mapping.yml"]
    assert mapping[security.ROLE_NAME]["users"] == [security.ROLE_NAME]
    assert security.ROLE_NAME not in mapping["all_access"].get("users", [])
    assert files["internal_users.yml"][security.ROLE_NAME].get("backend_roles", []) == []
    (permission,) = files["roles.yml"][security.ROLE_NAME]["index_permissions"]
    assert permission["index_patterns"] == security.index_patterns("staging")
    assert files["internal_users.yml"][security.ROLE_NAME]["reserved"] is True  # its password is not its to change
    assert files["config.yml"]["config"]["dynamic"]["do_not_fail_on_forbidden"] is True
    assert not any(action == "*" or action.startswith("cluster:admin") for action in security.CLUSTER_PERMISSIONS)


def test_the_role_in_the_docs_is_the_role_lawindex_writes() -> None:
    import re

    import yaml

    readme = (Path(__file__).resolve().parents[2] / "docs" / "nodes.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"```yaml\n(lawindex:\n.*?)```", readme, re.DOTALL)
    assert yaml.safe_load(block) == {"lawindex": security.role()}


def _covered(name: str, patterns: list[str]) -> bool:
    """Whether the security plugin's `patterns` match `name`: `/regex/` matched whole (Java and Python agree
    on these), any other pattern as the exact name (none of lawindex's has a wildcard)."""
    import re

    for pattern in patterns:
        assert "*" not in pattern and "?" not in pattern.strip("/").replace(")?", ")"), pattern
        if pattern.startswith("/") and pattern.endswith("/"):
            if re.fullmatch(pattern[1:-1], name):
                return True
        elif pattern == name:
            return True
    return False


def test_the_role_covers_every_name_lawindex_makes_and_no_look_alike() -> None:
    from indexer.opensearch.cluster.connection import alias_of, index_prefix
    from indexer.opensearch.trust.ownership import generation_pattern
    from indexer.opensearch.write.index_body import new_generation
    from indexer.opensearch.write.lock import locks_concrete_index, locks_index

    patterns = security.index_patterns("lawindex")
    generation = index_prefix("TX") + new_generation()
    assert generation_pattern("TX", "lawindex").fullmatch(generation)
    made = [alias_of("TX"), alias_of("DC"), generation, f"{generation}-filling", locks_index("lawindex"),
            locks_concrete_index("lawindex")]  # fmt: skip
    assert [name for name in made if not _covered(name, patterns)] == []
    look_alikes = [
        "lawindex-staging-tx-1",
        "lawindex-tx-1",
        "lawindex-tx-backup",
        "lawindex-txx",
        f"{generation}-copy",
        f"{generation}0",
        "lawindex-locks-2",
        "lawindex-lockss",
        "lawindexx-tx",
        "lawindex_t1-tx",
        "other-tx",
        "lawindex-TX",
    ]
    assert [name for name in look_alikes if _covered(name, patterns)] == []
