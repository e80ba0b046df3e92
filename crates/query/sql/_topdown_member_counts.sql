-- _topdown_member_counts (template): per event of one capture, its
-- samples and how many of them carry a value in each member column (a
-- read value's column is null where its id is unknown to the capture).
--
--   {counts}   `COUNT(m<k>) AS c<k>` for each member column a group can
--              fill
--   {capture}  the capture's id
--
--   event_id  → events
--   n         samples
--   c<k>      samples with a value in column m<k>
SELECT event_id, COUNT(*) AS n, {counts}
FROM samples
WHERE capture = {capture}
GROUP BY event_id
