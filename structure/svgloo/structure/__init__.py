"""Structure analysis: concepts -> heatmaps -> attribution -> metrics (plain numpy), on top
of the engine's leave-one-out footprints."""
