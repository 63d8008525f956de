"""The home page: what the current space's memory holds, its searches, the questions waiting,
today's LLM calls and the agents ticking, read in a bounded number of queries; and the badge
of waiting questions on the navigation of every page."""

import pytest
from django.test import Client
from django.urls import reverse

from agents.brains import services as brain_services
from memory.models import Search, SearchQuestion
from memory.selectors import node_internal_folder
from memsite.spaces.services import space_create
from tests.factories import AgentFactory, NodeFactory, SearchFactory, a_member, acting, default_space, system
from tests.llm.factories import make_call

pytestmark = pytest.mark.django_db


@pytest.fixture
def user_client(client: Client, user) -> Client:
    client.force_login(user)
    return client


def waiting_question(space=None, asked: str = "Which port?") -> SearchQuestion:
    search = SearchFactory(space=space or default_space(), status=Search.Status.WAITING, questions=[asked])
    return SearchQuestion.objects.create(search=search, questions=[asked])


@pytest.fixture
def busy_space(user, settings, offline_llm):
    """The default space with something in every part of the home page."""
    space = default_space()
    NodeFactory(name="notes", parent=node_internal_folder(space=space, name="user"))
    SearchFactory(questions=["Where is the plan?"], status=Search.Status.RUNNING)
    SearchFactory(questions=["What did we ship?"], status=Search.Status.DONE)
    waiting_question(space)
    make_call(by=acting(user, space))
    make_call(by=acting(user, space))
    settings.MEMSITE_TICK_MIN_INTERVAL_S = 10
    brain_services.ticking_start(agent=AgentFactory(name="ticker"), interval_s=60, by=acting(user))
    return space


def test_the_home_page_shows_the_space(user_client, busy_space):
    page = user_client.get(reverse("home"))
    assert page.status_code == 200
    html = page.content.decode()
    assert "Where is the plan?" in html and "What did we ship?" in html
    assert "Which port?" in html
    assert 'id="home-llm-calls">2<' in html
    assert "ticker" in html
    counts = page.context["memory"]
    user_folder = next(folder for folder in counts.folders if folder.name == "user")
    assert user_folder.count >= 2  # the folder and the note in it
    assert any(tally.name == "internal_folder" for tally in counts.types)
    assert counts.total == sum(tally.count for tally in counts.types)


def test_the_home_page_says_whom_each_agent_ticks_for_as_their_work_today_counts_it(user_client, user, busy_space):
    home = user_client.get(reverse("home")).content.decode()
    ledger = user_client.get(reverse("llm:ledger")).content.decode()
    assert f"ticker</a></td>\n            <td>{user.username}</td>" in home
    assert '<tr><th>agents ticking</th><td class="num">1</td>' in ledger


def test_the_home_page_shows_only_the_current_space(user_client, user, busy_space):
    other = space_create(user=user, slug="other", name="Other")
    waiting_question(other, asked="Is this elsewhere?")
    SearchFactory(space=other, questions=["Another space's search"], status=Search.Status.RUNNING)
    make_call(by=acting(user, other))
    html = user_client.get(reverse("home")).content.decode()
    assert "Is this elsewhere?" not in html and "Another space's search" not in html
    assert 'id="home-llm-calls">2<' in html


def test_the_home_page_asks_a_bounded_number_of_queries(user_client, user, busy_space, django_assert_max_num_queries):
    for number in range(15):
        SearchFactory(questions=[f"Search {number}"], status=Search.Status.DONE)
        waiting_question(asked=f"Question {number}")
        brain_services.ticking_start(agent=AgentFactory(), interval_s=60, by=a_member())
        make_call(by=system(busy_space))
    with django_assert_max_num_queries(13):
        assert user_client.get(reverse("home")).status_code == 200


def test_the_home_page_needs_a_login(client):
    page = client.get(reverse("home"))
    assert page.status_code == 302 and page["Location"].startswith(reverse("login"))


def test_the_brand_and_the_nav_lead_home(user_client, busy_space):
    html = user_client.get(reverse("memory:browser")).content.decode()
    assert f'class="brand" href="{reverse("home")}"' in html
    assert f'<a href="{reverse("home")}" >Home</a>' in html


def test_the_nav_badge_counts_the_questions_waiting(user_client, user):
    assert 'id="nav-questions-waiting"' not in user_client.get(reverse("memory:browser")).content.decode()
    waiting_question()
    waiting_question(asked="Which host?")
    html = user_client.get(reverse("memory:search_list")).content.decode()
    assert '<span class="count-badge" id="nav-questions-waiting" title="2 questions waiting for you">2</span>' in html


def test_the_nav_badge_counts_only_the_current_space(user_client, user):
    other = space_create(user=user, slug="other", name="Other")
    waiting_question(other)
    assert 'id="nav-questions-waiting"' not in user_client.get(reverse("agents:agent_list")).content.decode()


def test_the_nav_badge_is_one_query(user_client, user, django_assert_num_queries):
    waiting_question()
    user_client.get(reverse("memory:question_list"))  # the session and the principal, read once
    from django.test.client import RequestFactory

    from dashboard.context_processors import NavCounts
    from memsite.spaces.principals import principal_of

    request = RequestFactory().get("/")
    request.user = user
    principal_of(request)  # every page has found its principal before the nav is drawn
    with django_assert_num_queries(1):
        assert NavCounts(request).questions_waiting == 1
