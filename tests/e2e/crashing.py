"""The worker the crash tests kill (MyBB and SMF live): it polls one thread, rolls its posts
and sends their replies, printing ``ACCEPTED <id>`` as soon as the forum accepted the first
reply and then hanging, so the test can SIGKILL it by its pid before Redis records the reply.
A flood answer (SMF's is per IP, shared with the players) is waited out, as the task would.

Run as ``python -c CRASHING_WORKER <config> <forum> <thread>``.
"""

CRASHING_WORKER = r"""
import os, sys, time
from worker.app.bootstrap import build_services
from worker.forums.base import ForumError
from worker.forums.profile import ProfileClient
from worker.service import poll_thread, process_post, send_reply
from worker.config.settings import load_settings

original = ProfileClient.post_reply

def post_then_hang(self, thread_id, content):
    reply_id = original(self, thread_id, content)
    print(f"ACCEPTED {reply_id}", flush=True)  # the forum has the reply; Redis does not know yet
    time.sleep(300)  # killed long before

ProfileClient.post_reply = post_then_hang
svc = build_services(load_settings(sys.argv[1]))
for post in poll_thread(svc, sys.argv[2], sys.argv[3]):
    if process_post(svc, post).status == "pending_reply":
        for attempt in range(10):  # SMF's flood wait is per IP, shared with the players: retried, as the task is
            try:
                send_reply(svc, sys.argv[2], post.post_id)
                break
            except ForumError as exc:
                if exc.reason != "flood":
                    raise
                time.sleep(exc.retry_after or 6)
"""
