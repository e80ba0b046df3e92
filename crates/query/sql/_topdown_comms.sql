-- _topdown_comms: each thread's last comm, which topdown's thread and
-- process rows are named by.
--
--   capture, tid  → threads
--   comm          the thread's last name
SELECT capture, tid, comm
FROM (
  SELECT capture, tid, comm,
    row_number() OVER (PARTITION BY capture, tid ORDER BY time DESC) AS rn
  FROM threads
  WHERE comm IS NOT NULL
)
WHERE rn = 1
