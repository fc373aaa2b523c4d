"""P2T: process graphs from gold patches, and trajectories curated window by window against them."""
