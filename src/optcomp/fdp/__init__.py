"""f-DP and Gaussian DP (Dong, Roth, Su)."""
