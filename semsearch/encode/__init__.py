"""Stage 2, turning chunks into what search compares: embedding models and the keyword index."""
