"""Packages: signed archives that add a theme, a plugin or a lane to a site.

archive.py   the archive (a gzipped tar), read in memory with its paths and members checked
manifest.py  manifest.json (name, version, kind, files with sha256, contributions), canonical bytes
signing.py   Ed25519 keys and signatures over the canonical manifest
trust.py     trusted publisher keys: the platform keyring and the tenant's own
verify.py    verify_package: archive → signature → key → manifest → every file → the kind's check
kinds.py     the registry of content kinds (validate / install / uninstall callables)
themes.py    the theme kind, and the theme a site renders with
plugins.py   the plugin kind (hooks registered as webhook endpoints)
staging.py   where archives and staged files live in the tenant's store
"""

from tenant_runtime.packages.archive import build_archive, directory_files, read_archive
from tenant_runtime.packages.kinds import ContentKind, PackageCheck, kind_of, kinds, register_kind
from tenant_runtime.packages.manifest import Manifest, canonical, manifest_for
from tenant_runtime.packages.signing import generate_key, key_id, public_key_of, sign_manifest
from tenant_runtime.packages.trust import PlatformKeyring, TrustedKey
from tenant_runtime.packages.verify import VerifiedPackage, verify_package

__all__ = [
    "ContentKind",
    "Manifest",
    "PackageCheck",
    "PlatformKeyring",
    "TrustedKey",
    "VerifiedPackage",
    "build_archive",
    "canonical",
    "directory_files",
    "generate_key",
    "key_id",
    "kind_of",
    "kinds",
    "manifest_for",
    "public_key_of",
    "read_archive",
    "register_kind",
    "sign_manifest",
    "verify_package",
]
