"""SWE-PRM: taxonomy-guided course correction during rollouts."""
