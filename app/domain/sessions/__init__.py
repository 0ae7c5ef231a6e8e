"""Sessions: opening, refreshing and ending them, the browser's, handoff codes, revocation."""
