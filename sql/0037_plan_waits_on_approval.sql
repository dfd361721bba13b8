-- A plan whose work waits for a person's yes on a tool call is paused meanwhile, and resumes on the answer: the
-- request it waits on is kept with it, so only that answer resumes it (a person who paused or resumed it in between
-- has had the last word).
ALTER TABLE plans ADD COLUMN awaiting_approval_id uuid REFERENCES tool_approvals (id) ON DELETE SET NULL;
