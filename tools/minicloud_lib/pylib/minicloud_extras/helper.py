#    Licensed under the Apache License, Version 2.0 (the "License"); you may
#    not use this file except in compliance with the License. You may obtain
#    a copy of the License at
#
#         http://www.apache.org/licenses/LICENSE-2.0
#
#    Unless required by applicable law or agreed to in writing, software
#    distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
#    WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
#    License for the specific language governing permissions and limitations
#    under the License.

"""One-shot helpers run by tools/minicloud inside the service venv.

python -m minicloud_extras.helper rings SWIFT_DIR ACCOUNT CONTAINER OBJECT
python -m minicloud_extras.helper certs DIR
"""

import datetime
import os
import sys


def rings(swift_dir, account_port, container_port, object_port):
    from swift.common.ring import RingBuilder

    for name, port in (
        ('account', account_port),
        ('container', container_port),
        ('object', object_port),
    ):
        builder = RingBuilder(8, 1, 1)
        builder.add_dev(
            {
                'region': 1,
                'zone': 1,
                'ip': '127.0.0.1',
                'port': int(port),
                'device': 'd1',
                'weight': 100,
                'meta': '',
            }
        )
        builder.rebalance()
        builder.save(os.path.join(swift_dir, name + '.builder'))
        builder.get_ring().save(os.path.join(swift_dir, name + '.ring.gz'))


def certs(directory):
    """A CA plus a client certificate, as Octavia's config wants them."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID

    os.makedirs(directory, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    later = now + datetime.timedelta(days=3650)

    def key():
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def pem_key(k):
        return k.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )

    ca_key = key()
    ca_name = x509.Name(
        [x509.NameAttribute(NameOID.COMMON_NAME, 'minicloud octavia CA')]
    )
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(later)
        .add_extension(
            x509.BasicConstraints(ca=True, path_length=None), critical=True
        )
        .sign(ca_key, hashes.SHA256())
    )
    cl_key = key()
    client = (
        x509.CertificateBuilder()
        .subject_name(
            x509.Name(
                [
                    x509.NameAttribute(
                        NameOID.COMMON_NAME, 'minicloud octavia client'
                    )
                ]
            )
        )
        .issuer_name(ca_name)
        .public_key(cl_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(later)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    files = {
        'ca_cert.pem': ca.public_bytes(pem),
        'ca_key.pem': pem_key(ca_key),
        'client.pem': client.public_bytes(pem) + pem_key(cl_key),
    }
    for name, data in files.items():
        with open(os.path.join(directory, name), 'wb') as f:
            f.write(data)
        os.chmod(os.path.join(directory, name), 0o600)


if __name__ == '__main__':
    {'rings': rings, 'certs': certs}[sys.argv[1]](*sys.argv[2:])
