"""``pressroom packages keygen`` and ``sign``: a publisher's directory becomes an archive the site verifies."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from control_plane.cli import app
from tenant_runtime.ids import utcnow
from tenant_runtime.packages import verify_package
from tenant_runtime.packages.signing import decode_public_key, key_id
from tenant_runtime.packages.trust import TrustedKey
from tests.tenant_runtime.package_kit import theme_files


def test_keygen_and_sign_make_a_verifiable_reproducible_archive(tmp_path: Path) -> None:
    runner = CliRunner()
    pem = tmp_path / "publisher.pem"
    generated = runner.invoke(app, ["packages", "keygen", "--out", str(pem)])
    assert generated.exit_code == 0, generated.output
    public = json.loads(generated.stdout.strip().splitlines()[-1])["public_key"]
    assert pem.stat().st_mode & 0o777 == 0o600
    assert runner.invoke(app, ["packages", "keygen", "--out", str(pem)]).exit_code == 1  # never overwritten
    source = tmp_path / "theme"
    for path, content in theme_files().items():
        (source / path).parent.mkdir(parents=True, exist_ok=True)
        (source / path).write_bytes(content)
    (source / "package.json").write_text(json.dumps({"name": "magazine", "version": "2.0.0", "kind": "theme"}))

    archives = []
    for n in range(2):
        out = tmp_path / f"out-{n}.tar.gz"
        signed = runner.invoke(app, ["packages", "sign", str(source), "--key", str(pem), "--out", str(out)])
        assert signed.exit_code == 0, signed.output
        archives.append(out.read_bytes())

    assert archives[0] == archives[1]
    raw = decode_public_key(public)
    verified = verify_package(archives[0], {key_id(raw): TrustedKey(key_id(raw), raw, "tenant")}, now=utcnow())
    assert verified.manifest.ref == "magazine@2.0.0" and set(verified.files) == set(theme_files())
    (source / "escape").symlink_to("/etc/passwd")
    refused = runner.invoke(app, ["packages", "sign", str(source), "--key", str(pem)])
    assert refused.exit_code == 1 and "package_unsafe_path" in refused.output
