"""Configuration of `prchain report`: how much of each diff and observation goes into the site."""

from pydantic import BaseModel, ConfigDict, Field


class ReportConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_diff_lines: int = Field(
        400,
        ge=10,
        description="Lines of each diff shown on a chain page; the rest is counted, not shown "
        "(keeps the site small on stores with thousands of chains).",
    )
    max_observation_chars: int = Field(
        20_000,
        ge=200,
        description="Characters of each tool observation shown on a trajectory page (head and tail).",
    )
    max_chain_pages: int = Field(
        20_000,
        ge=1,
        description="Chain pages written, best chains first (longest, then highest score); every "
        "chain still appears in the index list.",
    )
    funnel_graph: bool = Field(
        True,
        description="Show what each filter and link rule dropped in the latest `chains build` "
        "(kept with the build; nothing is rebuilt); off leaves that step out of the funnel.",
    )
