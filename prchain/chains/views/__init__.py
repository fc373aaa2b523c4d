"""Views: chains and links read back for people, samples, hand checks, stats and the task export."""
