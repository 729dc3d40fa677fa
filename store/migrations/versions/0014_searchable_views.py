"""Views recall's searches read through, each applying the tenant wall itself, so a search by words can use its
index under the app role (store/rls.py says why the policy alone keeps it off).

Revision ID: 0014
Revises: 0013
"""

from __future__ import annotations

from alembic import op

from store import rls
from store.models.searchable import VIEWS

revision = '0014'
down_revision = '0013'
branch_labels = None
depends_on = None


def upgrade() -> None:
    for view in VIEWS:
        for statement in rls.searchable_view_sql(view.name, view.info["table"], [c.name for c in view.columns]):
            op.execute(statement)


def downgrade() -> None:
    for view in VIEWS:
        op.execute(f"DROP VIEW IF EXISTS {view.name}")
