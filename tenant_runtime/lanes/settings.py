"""Settings of the lane steps: the text provider, grounding's allow-list, the per-run budget."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr, field_validator

from tenant_runtime.config import PressroomSettings


class LaneSettings(PressroomSettings):
    """``PRESSROOM_LANES_*``: provider (offline | anthropic), Anthropic URL/key/model/prices, grounding, budget."""

    lanes_provider: Literal["offline", "anthropic"] = "offline"
    lanes_anthropic_url: str = "https://api.anthropic.com"
    lanes_anthropic_key: SecretStr = SecretStr("")
    lanes_anthropic_model: str = "claude-sonnet-4-5"
    lanes_anthropic_timeout_seconds: float = Field(120.0, gt=0, le=600)
    lanes_max_tokens: int = Field(2048, ge=64, le=64_000)
    # Prices in millionths of a dollar per million tokens (3 $/M in, 15 $/M out by default).
    lanes_input_micros_per_mtok: int = Field(3_000_000, ge=0)
    lanes_output_micros_per_mtok: int = Field(15_000_000, ge=0)
    # What the offline provider says a call costs (0: free; tests set it to exercise the ledger and budget).
    lanes_offline_micros_per_call: int = Field(0, ge=0)
    # Hosts grounding may fetch from ("*": any public host); private and loopback addresses need the
    # operator's allowance below.
    lanes_ground_allow: tuple[str, ...] = ("*",)
    lanes_ground_allow_private: bool = False
    lanes_ground_timeout_seconds: float = Field(10.0, gt=0, le=120)
    lanes_ground_max_bytes: int = Field(1_000_000, ge=1024, le=50_000_000)
    # How long an approval lane's run waits for the editor's decision before the article stays a draft.
    lanes_approval_timeout_seconds: float = Field(7 * 24 * 3600.0, gt=0)
    # The per-run budget of a lane without one of its own, in millionths of a dollar.
    lanes_run_budget_micros: int = Field(2_000_000, ge=0)

    @field_validator("lanes_ground_allow", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(part.strip().lower() for part in value.split(",") if part.strip())
        return value

    @field_validator("lanes_anthropic_url")
    @classmethod
    def _no_trailing_slash(cls, value: str) -> str:
        return value.rstrip("/")


__all__ = ["LaneSettings"]
