"""Real plugin modules and helper seats the tests register, play and then unregister."""
