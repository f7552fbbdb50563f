"""The dashboard's model: the scenario, the variant registry, presets, patterns, comparisons,
limits (numpy only)."""
