# cswap tests: TAP test lines from Python (the caller prints the plan).
count = 0
failed = 0


def ok(cond, name):
    """Prints one TAP line for COND, counting it and any failure."""
    global count, failed
    count += 1
    if not cond:
        failed += 1
    print(f"{'' if cond else 'not '}ok {count} - {name}", flush=True)
