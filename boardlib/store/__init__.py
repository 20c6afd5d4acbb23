"""The store layer: the only code that speaks SQL. `contention` opens connections and retries,
`schema` migrates, `sqlite` is the repository every board rule reads and writes through."""
