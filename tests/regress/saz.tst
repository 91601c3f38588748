# Regression sequences in GNU Go's format (regression/*.tst, run by gogui-regress and by
# tests/test_regress.py): a loadsgf, then a numbered command whose expected answer follows on a
# "#?" line. The records were made for saz (tests/regress/games). What is tested here is the
# protocol path: every loadsgf and reg_genmove answers without an error, whichever record was
# loaded before (a handicap game before an even one once failed with "illegal move: suicide").

loadsgf games/handicap3.sgf 55
10 reg_genmove white
#? [!pass]

loadsgf games/out-of-turn13.sgf 4
20 reg_genmove black
#? [!pass]

loadsgf games/handicap3.sgf 41
30 reg_genmove white
#? [!pass]

loadsgf games/setup-white.sgf
40 reg_genmove white
#? [!pass]

loadsgf games/setup-white.sgf 1
50 reg_genmove white
#? [!pass]

# Move 11 was played out of turn; loading up to it and past it.
loadsgf games/out-of-turn13.sgf 12
60 reg_genmove white
#? [!pass]

loadsgf games/out-of-turn13.sgf
70 reg_genmove black
#? [!pass]

# GoGui sends komi after loading; the handicap stones stay where they are.
loadsgf games/handicap3.sgf 3
komi 3
80 reg_genmove white
#? [!pass]

81 gogui-rules_side_to_move
#? [white]

82 get_komi
#? [3]

loadsgf games/handicap3.sgf 1
90 reg_genmove white
#? [!pass]
