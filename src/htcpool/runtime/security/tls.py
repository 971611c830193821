"""TLS on the daemons' TCP ports: the pool's own certificate authority and host certificates.

A pool that encrypts (``SEC_DEFAULT_ENCRYPTION = REQUIRED``, or any daemon bound to an address
other than loopback unless encryption is ``OPTIONAL`` or ``NEVER``) serves HTTPS on its TCP ports;
its Unix sockets stay plain, since nothing leaves the host there. At first start the pool makes
a certificate authority with ``cryptography`` (an EC P-256 key, ``ca.key`` in
``SEC_PASSWORD_DIRECTORY``, owner-only; its certificate, public, as ``run/ca.pem``) and signs a
certificate for this host (``host.pem``/``host.key`` beside the CA key) naming ``localhost``,
``FULL_HOSTNAME`` and the host's addresses. ``AUTH_SSL_SERVER_CERTFILE`` and
``AUTH_SSL_SERVER_KEYFILE``, when both name files that exist, are used instead. Clients verify a
daemon's certificate against ``run/ca.pem`` (``AUTH_SSL_CLIENT_CAFILE`` when it names a file);
the other hosts of a pool get the central manager's ``ca.key`` and ``ca.pem`` with its signing
key (docs/security.md).

``token_may_travel(url)``: a client attaches its token only on HTTPS, on loopback or on a Unix
socket, so a token never crosses the network in clear text.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import ssl
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

CA_DAYS = 3650
HOST_DAYS = 825


def token_may_travel(url: str) -> bool:
    """Whether a token may be sent to ``url``: HTTPS, a Unix socket, or this host's loopback."""
    if url.startswith("unix:"):
        return True
    parts = urlsplit(url)
    if parts.scheme == "https":
        return True
    host = (parts.hostname or "").strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def encryption_wanted(mode: str, address: str) -> bool:
    """Whether a daemon at ``address`` speaks HTTPS under ``SEC_DEFAULT_ENCRYPTION = mode``: always
    when REQUIRED, never when OPTIONAL or NEVER, otherwise when the address is not loopback. Servers
    and the clients that build a collector's URL from ``COLLECTOR_HOST`` decide alike."""
    mode = mode.upper()
    if mode in ("OPTIONAL", "NEVER"):
        return False
    if mode == "REQUIRED":
        return True
    host = address.strip("[]")
    if host == "localhost":
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:
        return True


def _write_private(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


@dataclass(frozen=True)
class TlsFiles:
    """The files of a pool's TLS: the CA's certificate (public), this host's certificate and key."""

    ca_cert: Path
    cert: Path
    key: Path

    def server_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(str(self.cert), str(self.key))
        return context


def client_context(ca_cert: Path) -> ssl.SSLContext:
    """A context that trusts the pool's CA only."""
    return ssl.create_default_context(cafile=str(ca_cert))


def ensure_tls(password_dir: Path, public_ca: Path, names: list[str], addresses: list[str]) -> TlsFiles:
    """The pool's CA and this host's certificate, made when missing (module docstring)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    ca_key_file, ca_cert_file = password_dir / "ca.key", password_dir / "ca.pem"
    now = datetime.datetime.now(datetime.UTC)
    pem = serialization.Encoding.PEM
    private = serialization.PrivateFormat.PKCS8
    if not ca_key_file.exists() or not ca_cert_file.exists():
        ca_key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "htcpool pool CA")])
        ca_cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
                   .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(minutes=5))
                   .not_valid_after(now + datetime.timedelta(days=CA_DAYS))
                   .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
                   .sign(ca_key, hashes.SHA256()))
        _write_private(ca_key_file, ca_key.private_bytes(pem, private, serialization.NoEncryption()))
        _write_private(ca_cert_file, ca_cert.public_bytes(pem))
    signer = serialization.load_pem_private_key(ca_key_file.read_bytes(), None)
    if not isinstance(signer, ec.EllipticCurvePrivateKey):
        raise ValueError(f"{ca_key_file} is not the pool's certificate authority key (EC)")
    ca_cert = x509.load_pem_x509_certificate(ca_cert_file.read_bytes())
    public_ca.parent.mkdir(parents=True, exist_ok=True)
    if not public_ca.exists() or public_ca.read_bytes() != ca_cert_file.read_bytes():
        public_ca.write_bytes(ca_cert_file.read_bytes())
        os.chmod(public_ca, 0o644)
    files = TlsFiles(public_ca, password_dir / "host.pem", password_dir / "host.key")
    wanted = sorted(set(names) | {"localhost"}), sorted(set(addresses) | {"127.0.0.1"})
    if files.cert.exists() and files.key.exists():
        cert = x509.load_pem_x509_certificate(files.cert.read_bytes())
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        have = (sorted(san.get_values_for_type(x509.DNSName)),
                sorted(str(a) for a in san.get_values_for_type(x509.IPAddress)))
        if have == wanted and cert.issuer == ca_cert.subject and \
                cert.not_valid_after_utc > now + datetime.timedelta(days=1):
            return files
    key = ec.generate_private_key(ec.SECP256R1())
    alt = [x509.DNSName(n) for n in wanted[0]] + [x509.IPAddress(ipaddress.ip_address(a)) for a in wanted[1]]
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, wanted[0][0])]))
            .issuer_name(ca_cert.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=HOST_DAYS))
            .add_extension(x509.SubjectAlternativeName(alt), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .sign(signer, hashes.SHA256()))
    _write_private(files.key, key.private_bytes(pem, private, serialization.NoEncryption()))
    _write_private(files.cert, cert.public_bytes(pem))
    return files


__all__ = ["TlsFiles", "client_context", "encryption_wanted", "ensure_tls", "token_may_travel"]
