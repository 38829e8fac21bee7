"""Operations: every delivery and chore of a site, its attempts and its Prefect run; retry and cancel."""
