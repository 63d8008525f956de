"""A word's root (Snowball, irregular forms mapped first) and its light stem."""

from memsite.text.stems import IRREGULAR, root, stem


def test_irregular_and_inflected_forms_share_a_root():
    assert root("ran") == root("run") == root("running") == root("runs")
    assert root("bought") == root("buy") and root("went") == root("go") and root("met") == root("meeting")


def test_irregular_plurals_share_their_singulars_root():
    assert root("children") == root("child") and root("people") == root("person") and root("teeth") == root("tooth")


def test_a_word_of_two_readings_is_left_to_the_stemmer():
    # "left" (the side, or leave's past) and "found" (find's past, or to found a company).
    assert "left" not in IRREGULAR and "found" not in IRREGULAR
    assert root("left") != root("leave") and root("found") != root("find")


def test_the_light_stem_strips_one_suffix_from_long_enough_words_only():
    assert [stem(word) for word in ("running", "walked", "watches", "kayaks")] == ["runn", "walk", "watch", "kayak"]
    assert [stem(word) for word in ("sing", "bed", "uses", "dogs")] == ["sing", "bed", "uses", "dogs"]
