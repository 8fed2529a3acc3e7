"""The paper's analyses as pure functions: outcome rows in, numbers out (no I/O, no plotting).

    pools.py     outcome rows, condition pools, votes over pool draws, estimates with intervals
    tables.py    the main table, M scaling, K ablation, asymmetric yield, accuracy against rho
    speaking.py  who spoke last (the final-speaker test) and who wrote the trajectories

Every row is one `Outcome`: a single MAJ answer or a single RR trajectory of one condition and
question. A condition's rows for one question form its *pool* (M* answers, M* trajectories).

Pool design (the paper's appendix D). For a budget M <= M*, one trial draws M members of each
question's pool without replacement and takes the plurality (ties broken at random; unreadable
answers do not vote; a vote with no readable answer is wrong); the accuracy is averaged over 50
trials. RRMaj draws M of the M* trajectories. MAJ keeps the ensemble's c:t composition: it draws
M*c/N answers from the corrupted agents' answers and the rest from the truthful agents' (the
fraction is rounded up with probability equal to its remainder, so the expected share is exact).
At M = 1 no draw is made: RRMaj is the mean accuracy of one trajectory, p_rr, and MAJ is the
expectation c/(c+t) P(corrupted correct) + t/(c+t) P(truthful correct).

Intervals: `std` is the spread over the pool-sampling trials (the paper's "±"); `lo`/`hi` is a 95%
percentile bootstrap over questions (1000 resamples, each question with a random trial), so it
covers both the question sample and the pool draws. Delta = RRMaj - MAJ is bootstrapped paired on
the same resampled questions.
"""
