"""What every part of etclib stands on: settings, errors, atomic files, JSON lines, progress,
registries, redaction, fault points, the admin token and formula-safe CSV."""
