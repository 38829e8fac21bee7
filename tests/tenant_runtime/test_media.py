"""The media library below the API: types from the bytes, names, embeds and the reference scan."""

from __future__ import annotations

import html as html_lib
import io
import os

import pytest
from PIL import Image

from tenant_runtime.actions import documents
from tenant_runtime.actions import media as actions
from tenant_runtime.errors import BadRequest, UnsupportedMediaType
from tenant_runtime.media import references
from tenant_runtime.media.types import MAX_IMAGE_PIXELS, sniff
from tenant_runtime.versions.bodies import spill_cold_bodies
from tenant_runtime.workspace import SYSTEM, Workspace


def image(fmt: str, size: tuple[int, int] = (5, 4)) -> bytes:
    out = io.BytesIO()
    Image.frombytes("RGB", size, os.urandom(size[0] * size[1] * 3)).save(out, format=fmt)
    return out.getvalue()


@pytest.mark.parametrize(
    ("fmt", "content_type"),
    [("PNG", "image/png"), ("JPEG", "image/jpeg"), ("GIF", "image/gif"), ("WEBP", "image/webp")],
)
def test_images_are_told_from_their_bytes_and_measured(fmt: str, content_type: str) -> None:
    sniffed = sniff(image(fmt))
    assert (sniffed.content_type, sniffed.width, sniffed.height) == (content_type, 5, 4)


@pytest.mark.parametrize(
    ("head", "content_type"),
    [
        (b"%PDF-1.4\n", "application/pdf"),
        (b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00", "video/mp4"),
        (b"\x1a\x45\xdf\xa3\x9f", "video/webm"),
        (b"ID3\x04\x00", "audio/mpeg"),
    ],
)
def test_other_allowed_types_by_signature(head: bytes, content_type: str) -> None:
    assert sniff(head + b"\x00" * 32) == type(sniff(head + b"\x00" * 32))(content_type)


@pytest.mark.parametrize(
    "data",
    [b"<svg xmlns='http://www.w3.org/2000/svg'/>", b"<html><script>x</script>", b"MZ\x90\x00", b"PK\x03\x04zip"],
)
def test_anything_else_is_refused_whatever_it_is_called(data: bytes) -> None:
    with pytest.raises(UnsupportedMediaType) as caught:
        sniff(data)
    assert caught.value.code == "media_type_not_allowed"


def test_a_broken_image_or_a_decompression_bomb_is_a_bad_request() -> None:
    jpeg = image("JPEG")
    with pytest.raises(BadRequest, match="not a readable image"):
        sniff(jpeg[:3] + b"\x00" * 40)
    side = int(MAX_IMAGE_PIXELS**0.5) + 100
    bomb = io.BytesIO()
    Image.new("1", (side, side)).save(bomb, format="PNG")
    with pytest.raises(BadRequest) as caught:
        sniff(bomb.getvalue())
    assert caught.value.code == "invalid_media"


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("../../etc/passwd", "passwd"),
        ("C:\\x\\photo.JPG", "photo.JPG"),
        ("a\x00b\n  c.png", "ab c.png"),
        ("", "upload"),
    ],
)
def test_names_lose_paths_and_control_characters(raw: str, clean: str) -> None:
    assert actions.clean_name(raw) == clean


def test_the_reference_scan_sees_current_bodies_and_every_kept_revision(workspace: Workspace) -> None:
    with workspace.transaction() as tx:
        media = actions.upload_media(tx, workspace.store, SYSTEM, name="a.png", data=image("PNG"))
        other = actions.upload_media(tx, workspace.store, SYSTEM, name="b.png", data=image("PNG"))
    with workspace.transaction() as tx:
        doc = documents.create_document(
            tx, SYSTEM, slug="about", title="About", body=f"![a](media:{media.id})", kind="page"
        )
    with workspace.transaction() as tx:
        documents.update_document(tx, SYSTEM, doc.id, expected_version=1, body="no pictures now")
    with workspace.reader() as tx:
        found = references.references_to(tx, workspace.store, [media.id, other.id])
    assert [r.as_dict() for r in found[media.id]] == [
        {"document_id": doc.id, "slug": "about", "version": 1, "in_body": True, "fields": [], "default_of": None}
    ]
    assert found[other.id] == []
    assert references.embedded_ids(f"media:{media.id} media:{other.id} media:{media.id}") == [media.id, other.id]


def test_the_reference_scan_reads_spilled_version_bodies(workspace: Workspace) -> None:
    with workspace.transaction() as tx:
        media = actions.upload_media(tx, workspace.store, SYSTEM, name="a.png", data=image("PNG"))
    long_body = "word " * 5000 + f"![a](media:{media.id})"
    with workspace.transaction() as tx:
        doc = documents.create_document(tx, SYSTEM, slug="long", title="Long", body=long_body, kind="page")
    with workspace.transaction() as tx:
        documents.update_document(tx, SYSTEM, doc.id, expected_version=1, body="short now")
    with workspace.transaction() as tx:
        assert spill_cold_bodies(tx, workspace.store)["spilled"] == 1
    with workspace.reader() as tx:
        found = references.references_to(tx, workspace.store, [media.id])
    assert [r.version for r in found[media.id]] == [1]


@pytest.mark.parametrize(
    ("name", "content_type", "code"),
    [
        ("logo.png", "image/png", "![logo.png](media:{id})"),
        ("terms.pdf", "application/pdf", "[terms.pdf](media:{id})"),
        ("a [b]*c*_d_ `e` <f> & \\.png", "image/png", r"![a \[b\]\*c\*\_d\_ \`e\` \<f\> \& \\.png](media:{id})"),
    ],
)
def test_an_embed_code_shows_an_image_links_any_other_file_and_keeps_the_name_as_text(
    name: str, content_type: str, code: str
) -> None:
    from tenant_runtime.rendering import render_markdown

    media_id = "med_" + "0" * 26
    embed = references.embed_markdown(media_id, name, content_type)
    assert embed == code.format(id=media_id) and references.embedded_ids(embed) == [media_id]
    html = render_markdown(embed, base_url="http://site.test/acme")
    shown = html_lib.escape(name, quote=True)
    if content_type.startswith("image/"):
        assert f'<img src="http://site.test/acme/media/{media_id}" alt="{shown}">' in html, html
    else:
        assert f'<a href="http://site.test/acme/media/{media_id}" rel="noopener noreferrer">{shown}</a>' in html, html
