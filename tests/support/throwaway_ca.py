"""A certificate authority made by a test, and the certificates it signs, as PEM files.

    ca = ThrowawayCA.create(tmp_path / 'ca', 'cellplane test CA')
    server = ca.issue(tmp_path / 'server', 'localhost')     # for 127.0.0.1 and localhost
    rogue = ThrowawayCA.create(tmp_path / 'rogue', 'rogue CA').issue(...)

Each ``Issued`` names its ``cert``, ``key`` and the ``ca`` file of the
authority that signed it; keys are EC P-256, valid for a day, and readable
by their owner alone (PostgreSQL refuses a key others may read).
"""
from __future__ import annotations

import dataclasses
import datetime
import ipaddress
import os
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALID_FOR = datetime.timedelta(days=1)


@dataclasses.dataclass(frozen=True)
class Issued:
    """A certificate's files: ``cert``, ``key``, and ``ca`` (its signer's certificate)."""
    cert: Path
    key: Path
    ca: Path


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey) -> None:
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                       serialization.PrivateFormat.TraditionalOpenSSL,
                                       serialization.NoEncryption()))
    os.chmod(path, 0o600)


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, 'cellplane tests'),
                      x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


class ThrowawayCA:
    """A self-signed CA whose files live in ``directory`` (``ca.pem``, ``ca.key``)."""

    def __init__(self, directory: Path, key: ec.EllipticCurvePrivateKey,
                 cert: x509.Certificate) -> None:
        self.directory = directory
        self.key = key
        self.cert = cert
        self.cert_file = directory / 'ca.pem'

    @classmethod
    def create(cls, directory: Path, common_name: str) -> ThrowawayCA:
        directory.mkdir(parents=True, exist_ok=True)
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        cert = (x509.CertificateBuilder()
                .subject_name(_name(common_name)).issuer_name(_name(common_name))
                .public_key(key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(now - datetime.timedelta(minutes=5))
                .not_valid_after(now + VALID_FOR)
                .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
                .add_extension(x509.KeyUsage(
                    digital_signature=True, content_commitment=False, key_encipherment=False,
                    data_encipherment=False, key_agreement=False, key_cert_sign=True,
                    crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
                .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                               critical=False)
                .sign(key, hashes.SHA256()))
        ca = cls(directory, key, cert)
        ca.cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        _write_key(directory / 'ca.key', key)
        return ca

    def issue(self, name: str, hosts: tuple[str, ...] = ('localhost', '127.0.0.1'),
              *, client: bool = False) -> Issued:
        """``<name>.pem`` and ``<name>.key`` beside the CA's files, for ``hosts`` (DNS names or IPs).

        A server certificate (serverAuth) unless ``client``; its common
        name is ``hosts[0]`` (PostgreSQL's client certificates need the
        user's name there).
        """
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        alt_names: list[x509.GeneralName] = []
        for host in hosts:
            try:
                alt_names.append(x509.IPAddress(ipaddress.ip_address(host)))
            except ValueError:
                alt_names.append(x509.DNSName(host))
        usage = ExtendedKeyUsageOID.CLIENT_AUTH if client else ExtendedKeyUsageOID.SERVER_AUTH
        cert = (x509.CertificateBuilder()
                .subject_name(_name(hosts[0])).issuer_name(self.cert.subject)
                .public_key(key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(now - datetime.timedelta(minutes=5))
                .not_valid_after(now + VALID_FOR)
                .add_extension(x509.SubjectAlternativeName(alt_names), critical=False)
                .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
                .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                    self.key.public_key()), critical=False)
                .sign(self.key, hashes.SHA256()))
        cert_file = self.directory / f'{name}.pem'
        key_file = self.directory / f'{name}.key'
        cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        _write_key(key_file, key)
        return Issued(cert_file, key_file, self.cert_file)
