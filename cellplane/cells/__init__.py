"""Cell mappings: where each cell's database and message bus are (API database)."""
