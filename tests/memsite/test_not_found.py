import pytest

from tests.openapi import assert_documented

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "method, path, documented",
    [
        ("get", "/api/agents/null,null/", "/api/agents/{agent_id}/"),
        ("post", "/api/agents/AAA/goals/", "/api/agents/{agent_id}/goals/"),
        ("get", "/api/graphs/0.5/nodes/", "/api/graphs/{graph_id}/nodes/"),
        ("post", "/api/searches/true/cancel/", "/api/searches/{search_id}/cancel/"),
        ("post", "/api/questions/null/answer/", "/api/questions/{question_id}/answer/"),
    ],
)
def test_an_api_path_whose_id_cannot_be_one_is_a_documented_json_404(api, method, path, documented):
    response = getattr(api, method)(path)
    assert response.status_code == 404 and response["Content-Type"] == "application/json"
    assert response.json() == {"detail": "Not found."}
    assert_documented(response, documented, method)


def test_an_unknown_api_path_is_a_json_404(api):
    response = api.get("/api/no-such-thing/")
    assert response.status_code == 404 and response.json() == {"detail": "Not found."}


def test_a_missing_page_of_the_dashboard_is_still_html(client):
    response = client.get("/no-such-page/")
    assert response.status_code == 404 and response["Content-Type"].startswith("text/html")
