"""Building signed (and broken) package archives for tests, as a publisher's tooling would."""

from __future__ import annotations

import io
import json
import tarfile
from typing import Any

from tenant_runtime.packages import build_archive, generate_key, manifest_for, sign_manifest

THEME_PAGE = """{% extends "default/base.html" %}
{% block title %}{{ doc.title }} · {{ site.title }}{% endblock %}
{% block content %}
<article class="magazine"><h1>{{ doc.title }}</h1>{{ body_html }}</article>
{% endblock %}
"""
THEME_HOME = """{% extends "default/base.html" %}
{% block content %}
<section class="magazine-home">{% for post, summary in posts %}<h2>{{ post.title }}</h2>{% endfor %}</section>
{% endblock %}
"""


class Publisher:
    """A publisher's key pair, signing package directories into archives."""

    def __init__(self) -> None:
        self.private_pem, self.public_key = generate_key()

    def files_and_signature(self, files: dict[str, bytes], **fields: Any) -> tuple[dict[str, Any], dict[str, str]]:
        manifest = manifest_for(files, **fields)
        return manifest, sign_manifest(self.private_pem, manifest)

    def archive(self, files: dict[str, bytes], **fields: Any) -> bytes:
        manifest, signature = self.files_and_signature(files, **fields)
        return pack(files, manifest, signature)

    def theme(self, name: str = "magazine", version: str = "1.0.0", marker: str = "magazine") -> bytes:
        return self.archive(theme_files(marker), name=name, version=version, kind="theme")


def theme_files(marker: str = "magazine") -> dict[str, bytes]:
    return {
        "templates/page.html": THEME_PAGE.replace("magazine", marker).encode(),
        "templates/home.html": THEME_HOME.replace("magazine", marker).encode(),
    }


def pack(files: dict[str, bytes], manifest: dict[str, Any] | None, signature: dict[str, str] | None) -> bytes:
    members = dict(files)
    if manifest is not None:
        members["manifest.json"] = json.dumps(manifest, indent=2).encode()
    if signature is not None:
        members["signature.json"] = json.dumps(signature).encode()
    return build_archive(members)


def raw_tar(members: list[tarfile.TarInfo], contents: dict[str, bytes]) -> bytes:
    """A gzipped tar written member by member (symlinks, odd paths) — what build_archive never writes."""
    import gzip

    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for info in members:
            data = contents.get(info.name, b"")
            if info.isfile():
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            else:
                tar.addfile(info)
    return gzip.compress(raw.getvalue())
