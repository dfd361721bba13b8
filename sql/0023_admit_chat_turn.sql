-- A chat turn's place, taken in one round trip: under a transaction lock on the person, stale places are cleared,
-- the person's running turns counted and, below the limit, this turn's place taken (a row left for the same
-- conversation by a process that died becomes this turn's). Answers how many were running before; the caller
-- refuses the turn when that is the limit or more. One call instead of six statements before the first token.
CREATE FUNCTION admit_chat_turn(p_user uuid, p_conversation uuid, p_now timestamptz, p_lease_until timestamptz, p_limit integer)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  running integer;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('chat-turns:' || p_user::text, 0));
  DELETE FROM chat_turns WHERE user_id = p_user AND lease_until < p_now;
  SELECT count(*)::integer INTO running FROM chat_turns WHERE user_id = p_user;
  IF running < p_limit THEN
    INSERT INTO chat_turns (conversation_id, user_id, lease_until) VALUES (p_conversation, p_user, p_lease_until)
    ON CONFLICT (conversation_id) DO UPDATE SET user_id = p_user, lease_until = p_lease_until;
  END IF;
  RETURN running;
END
$$;
