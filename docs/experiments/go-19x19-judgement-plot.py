import csv, matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows = list(csv.DictReader(open("docs/experiments/go-19x19-judgement.csv")))
fig, ax = plt.subplots(figsize=(8, 4))
for branch, colour, label in (("main", "tab:blue", "main run (5x5 to 9x9)"),
                              ("13x13", "tab:orange", "13x13 branch"),
                              ("lines", "tab:green", "13x13 branch with the line planes")):
    rs = [r for r in rows if r["branch"] == branch]
    g = [int(r["generation"]) for r in rs]
    ax.plot(g, [float(r["value_agrees"]) for r in rs], "-", color=colour, label=f"{label}: all plies")
    ax.plot(g, [float(r["value_agrees_to_ply_100"]) for r in rs], ":", color=colour,
            label=f"{label}: plies 10-100")
ax.axhline(50, color="grey", lw=0.8)
ax.axvline(168, color="grey", lw=0.8, ls="--")
ax.set_xlabel("generation"); ax.set_ylabel("value sides with GNU Go's leader (%)")
ax.set_title("19x19: does the value know who leads? (GNU Go lead >= 10: 1,651 positions, 465 by ply 100)", fontsize=10)
ax.legend(fontsize=7, loc="lower left"); fig.tight_layout()
fig.savefig("docs/img/go-19x19-judgement.png", dpi=100)
