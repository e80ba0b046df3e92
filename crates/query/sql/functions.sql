-- functions: every function of the session's frames, numbered.
--
--   function_id  1.. in (symbol, dso) order, the same across captures;
--                0 is [unknown] (a frame the frames table lacks)
--   symbol, dso  as frame_functions names them
SELECT DENSE_RANK() OVER (ORDER BY symbol, dso) AS function_id, symbol, dso
FROM (SELECT DISTINCT symbol, dso FROM frame_functions)
UNION ALL
SELECT CAST(0 AS BIGINT) AS function_id, '[unknown]' AS symbol, '[unknown]' AS dso
