"""Custom fields of documents: the types, checking values on every write, converting them in migrations.

types.py        the seven field types: what a value of each must be, and conversions between them
validation.py   a document's values checked against its kind's definitions (clear 400s, stable codes)
"""

from tenant_runtime.fields.types import FIELD_TYPES, Unconvertible, check_options, check_value, convert
from tenant_runtime.fields.validation import FIELD_NAME, active_definitions, validate_fields

__all__ = [
    "FIELD_NAME",
    "FIELD_TYPES",
    "Unconvertible",
    "active_definitions",
    "check_options",
    "check_value",
    "convert",
    "validate_fields",
]
