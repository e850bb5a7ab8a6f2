"""Run-time support: what generated code and the Tensor layer call at run time."""
