"""Text of the demo workspace. ``{dN}`` is the date N days before today."""

from __future__ import annotations

FILES: list[tuple[str, str]] = [
    (
        "USER.md",
        """
# User

<!-- observed: {d240} | status: superseded -->
- Prefer 坐高铁出行，不坐飞机。 <!-- supersedes: travel-mode -->
<!-- observed: {d30} | status: active -->
- Prefer 短途旅行坐高铁，超过 1000 公里坐飞机。 <!-- supersedes: travel-mode -->
<!-- observed: {d90} | status: active -->
- Always 回复先给结论，再给细节。
<!-- observed: {d120} | status: active -->
- Never book hotels without free cancellation.
<!-- observed: {d60} | status: active -->
- Prefer window seats on trains and planes.
""",
    ),
    (
        "MEMORY.md",
        """
# Long-Term Memory

## 旅行
- 杭州周末行预算上限 3000 元（两人），包括酒店和高铁。 <!-- trigger: 杭州, 预算 --> <!-- importance: 8 -->
- 最后选择西湖边的酒店，没有订湖景房，因为超出预算。 <!-- trigger: 湖景房; 酒店 --> <!-- importance: 7 -->
- 返程车票尚未确认，需要在周五前订好，候选车次 G7512。 <!-- trigger: 返程, 车票 --> <!-- importance: 9 -->
- 小林对花生过敏，订餐时要提醒餐厅。 <!-- trigger: 餐厅, 过敏 --> <!-- importance: 10 -->

## Work
- The team chose PostgreSQL for the billing service. <!-- project: github.com/acme/billing --> <!-- importance: 6 -->
- Deploys happen on Tuesdays after the 10:00 standup. <!-- project: github.com/acme/billing; github.com/acme/infra -->
- Staging credentials rotate monthly; ask Priya. <!-- project: bad<key> -->
- The on-call rotation changes every Monday at noon. <!-- trigger: on-call -->
""",
    ),
    (
        "memory/{d6}.md",
        """
# {d6}

- 计划这个周末去杭州玩两天，住西湖附近。
- 预算：两人总共 3000 元以内，包括酒店和高铁。
- 想订湖景房，但要先看价格。
""",
    ),
    (
        "memory/{d4}.md",
        """
# {d4}

## 酒店
- 看了三家酒店。湖景房每晚 1800 元，超出预算太多。
- 最后订了西湖边的普通房，每晚 900 元，含早餐，可以免费取消。

## 交通
- 去程高铁 G7311 已经买好，周六早上 8:05 出发。
""",
    ),
    (
        "memory/{d3}-hotel-call.md",
        """
# Session: hotel call

- 给酒店打电话确认了入住时间：周六下午两点以后。
- 前台说可以提前寄存行李。
""",
    ),
    (
        "memory/{d2}.md",
        """
# {d2}

- 周六下午在西湖边散步，晚上吃了楼外楼。
- 返程车票还没买，周日晚上的高铁票很紧张。
- 小林提醒：餐厅一定要避开花生。
""",
    ),
    (
        "memory/{d1}.md",
        """
# {d1}

- 提醒：周五之前一定要确认返程车票，候选车次 G7512。
- Reminder: the billing service migration review moved to Thursday.
""",
    ),
    (
        "memory/{d146}.md",
        """
# {d146}

- Billing service: we chose PostgreSQL over MongoDB because we need multi-row transactions.
- Action item: write the schema migration plan before the end of the month.
""",
    ),
    (
        "memory/{d77}.md",
        """
# {d77}

- Incident: the staging deploy failed because the TLS certificate had expired.
- Fixed by renewing the certificate with certbot and adding a renewal alert.
""",
    ),
    (
        "memory/{d51}.md",
        """
# {d51}

- Kubernetes migration: the ingress controller moves to the new cluster next sprint.
- Priya owns the load balancer cut-over; the rollback plan is to flip DNS back.
""",
    ),
    (
        "memory/{d33}.md",
        """
# {d33}

- Postmortem review for the staging incident: alerts now page the on-call engineer.
- Decision: keep certificate renewals in the infra repo, not in each service.
""",
    ),
    (
        "memory/projects/billing.md",
        """
# Billing architecture

The billing service runs on PostgreSQL 16 with logical replication to the analytics warehouse.
Invoices are generated nightly by a cron job at 02:00 UTC.

## Open questions
- Should refunds go through the same queue as invoices?
""",
    ),
    (
        "DREAMS.md",
        """
# Dream Diary

<!-- openclaw:dreaming:diary:start -->
*{d1} 03:00*

The trip to Hangzhou keeps coming back: the budget, the room by the lake, the ticket home.
<!-- openclaw:dreaming:diary:end -->
""",
    ),
    (
        "memory/dreaming/light/{d1}.md",
        """
## Light Sleep
<!-- openclaw:dreaming:light:start -->
- Candidate: 返程车票还没买，周日晚上的高铁票很紧张。
<!-- openclaw:dreaming:light:end -->
""",
    ),
]
