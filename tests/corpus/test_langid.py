from openmsd.corpus.langid import CLD3, identify


def test_cld3_detects_languages_of_real_titles_and_abstracts():
    texts = [
        "Une MétaGrammaire pour les adjectifs du français. Nous présentons une nouvelle "
        "implémentation du prédicat adjectival.",
        "Clitic Climbing and Tense Auxiliaries in Polish and Romance. The aim of this paper is "
        "to compare the behaviour of pronominal clitics.",
        "A cochonilha no mundo luso-brasileiro: o manuscrito setecentista editado por Manuel "
        "Joaquim Henriques de Paiva",
        "Voces que Gritan Fuerte: Posiciones del Bloque de Poder Durante el gobierno",
    ]
    found = CLD3()(texts)
    assert [lang for lang, _ in found] == ["fr", "en", "pt", "es"]
    assert all(conf > 0.9 for _, conf in found)


def test_short_or_unreliable_text_falls_back_to_the_declared_language():
    found = identify(["Errata", "", "Parsing with Getarun"], ["pt", None, None])
    assert found == [("pt", None), (None, None), (None, None)]


def test_the_identifier_is_a_parameter():
    assert identify(["anything at all, long enough"], ["de"], lambda texts: [("xx", 0.5)]) == [
        ("xx", 0.5)]
