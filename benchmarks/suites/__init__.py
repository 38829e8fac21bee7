"""One module per suite; each exposes ``async def run(bench) -> dict`` (see ``benchmarks.runner``)."""
