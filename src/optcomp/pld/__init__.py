"""Privacy loss distributions: discretisation, FFT composition, certified queries."""
