"""The nginx configuration docs/operations.md gives loads (``nginx -t``) on the nginx installed here.

Skipped when nginx is not installed. The main block must load on nginx 1.22 (Debian 12) and
on any later nginx; the labelled variant for nginx 1.25.1 or later only where it applies.
"""

from __future__ import annotations

import datetime
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

OPERATIONS_PAGE = Path(__file__).resolve().parent.parent / "docs" / "operations.md"
HTTP2_LISTEN = "listen 443 ssl http2;"
HTTP2_DIRECTIVE_SINCE = (1, 25, 1)

nginx = shutil.which("nginx") or next(
    (str(path) for path in (Path("/usr/sbin/nginx"), Path("/usr/local/nginx/sbin/nginx")) if path.exists()), None
)
needs_nginx = pytest.mark.skipif(nginx is None, reason="nginx is not installed")


def nginx_blocks() -> list[str]:
    """The ```nginx blocks of the "Behind nginx" section, in page order."""
    section = OPERATIONS_PAGE.read_text(encoding="utf-8").split("## Behind nginx", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```nginx\n(.*?)```", section, re.DOTALL)


def nginx_version() -> tuple[int, ...]:
    assert nginx is not None
    shown = subprocess.run([nginx, "-v"], capture_output=True, text=True, check=False).stderr
    found = re.search(r"nginx/(\d+)\.(\d+)\.(\d+)", shown)
    assert found, shown
    return tuple(int(part) for part in found.groups())


def write_certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate and its key, standing in for the Let's Encrypt files the example names."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "gateway.example.org")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "fullchain.pem", folder / "privkey.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


def nginx_test(http_block: str, folder: Path) -> subprocess.CompletedProcess[str]:
    """``nginx -t`` on a whole nginx.conf holding ``http_block`` in its http block; every path under ``folder``."""
    cert_path, key_path = write_certificate(folder)
    http_block = http_block.replace("/etc/letsencrypt/live/gateway.example.org/fullchain.pem", str(cert_path))
    http_block = http_block.replace("/etc/letsencrypt/live/gateway.example.org/privkey.pem", str(key_path))
    (folder / "logs").mkdir(exist_ok=True)
    conf = folder / "nginx.conf"
    conf.write_text(
        f"pid {folder}/nginx.pid;\nerror_log {folder}/logs/error.log;\nevents {{}}\nhttp {{\n"
        f"access_log {folder}/logs/access.log;\nclient_body_temp_path {folder}/body;\n"
        f"proxy_temp_path {folder}/proxy;\n{http_block}\n}}\n",
        encoding="utf-8",
    )
    assert nginx is not None
    return subprocess.run(
        [nginx, "-t", "-p", str(folder), "-c", str(conf), "-e", f"{folder}/logs/error.log"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def test_the_page_gives_a_main_block_and_a_labelled_variant() -> None:
    """The main block listens the way nginx 1.22 understands; the variant says which nginx it is for."""
    main, variant = nginx_blocks()[:2]
    assert HTTP2_LISTEN in main and "http2 on;" not in main
    assert "1.25.1 or later" in variant and "http2 on;" in variant


@needs_nginx
def test_main_block_loads(tmp_path: Path) -> None:
    """The page's configuration passes ``nginx -t`` (on nginx 1.22 and on current nginx alike)."""
    checked = nginx_test(nginx_blocks()[0], tmp_path)
    assert checked.returncode == 0, checked.stderr


@needs_nginx
def test_variant_for_recent_nginx_loads(tmp_path: Path) -> None:
    """On nginx 1.25.1 or later, the main block with the variant's listener passes ``nginx -t`` too."""
    if nginx_version() < HTTP2_DIRECTIVE_SINCE:
        pytest.skip("the variant is for nginx 1.25.1 or later")
    main, variant = nginx_blocks()[:2]
    lines = "\n    ".join(line for line in variant.splitlines() if line and not line.startswith("#"))
    checked = nginx_test(main.replace(HTTP2_LISTEN, lines), tmp_path)
    assert checked.returncode == 0, checked.stderr
