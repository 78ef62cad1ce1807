"""A small shop library: prices, sorting, slugs and a legacy export."""
