"""The cell conductor: one cell's database and bus, its agents' reports, reschedules to alternates."""
