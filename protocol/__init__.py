"""Front-ends: GTP v2 (with analysis extensions) and the Gomocup protocol over stdin/stdout."""
