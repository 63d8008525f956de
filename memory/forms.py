"""Forms of the dashboard. They check the shape of the input; the services check the rules."""

from django import forms

from memory.index.retrieve import MAX_QUERY_CHARS
from memory.services.archive_plan import ImportMode
from memory.types import ContentKind, all_types

# Created elsewhere: internal folders by memsite itself, project files by archive uploads.
NOT_CREATABLE_TYPES = {"internal_folder"}


def creatable_type_choices() -> list[tuple[str, str]]:
    return [
        (memory_type.name, memory_type.name.replace("_", " "))
        for memory_type in all_types()
        if memory_type.name not in NOT_CREATABLE_TYPES and memory_type.content is not ContentKind.BYTES
    ]


class NodeCreateForm(forms.Form):
    type = forms.ChoiceField(choices=())
    name = forms.CharField(max_length=255)
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    content = forms.CharField(required=False, strip=False, widget=forms.Textarea(attrs={"rows": 4}))

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        type_field = self.fields["type"]
        assert isinstance(type_field, forms.ChoiceField)  # declared above
        type_field.choices = creatable_type_choices()


class NodeUpdateForm(forms.Form):
    version = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    # Absent for internal folders, which keep their name.
    name = forms.CharField(max_length=255, required=False)
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))


class NodeRestoreForm(forms.Form):
    version = forms.IntegerField(min_value=1, widget=forms.HiddenInput)  # the node's, as the page showed it


class ArchiveUploadForm(forms.Form):
    archive = forms.FileField()
    mode = forms.TypedChoiceField(
        label="If the project has the archive's paths",
        choices=ImportMode.choices,
        required=False,
        empty_value=ImportMode.FAIL,
        initial=ImportMode.FAIL,
    )


class NodeMoveForm(forms.Form):
    parent = forms.CharField(
        label="Destination",
        max_length=64,
        error_messages={"required": "Choose the folder to move it into."},
    )


class FolderFindForm(forms.Form):
    """A folder picker's find (a move's, a search's start): folders whose name holds `q`, or its id or path."""

    q = forms.CharField(label="Folder", required=False, max_length=255)


class DocumentEditForm(forms.Form):
    version = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    content = forms.CharField(required=False, strip=False, widget=forms.Textarea)


class MarkdownPreviewForm(forms.Form):
    content = forms.CharField(required=False, strip=False)


class FindForm(forms.Form):
    """The memory page's search box: the same bound on the query as `POST /api/retrieve/`."""

    q = forms.CharField(
        label="Query",
        required=False,
        max_length=MAX_QUERY_CHARS,
        error_messages={
            "max_length": f"%(show_value)d characters, over the limit of {MAX_QUERY_CHARS:,}. Shorten it.",
        },
    )
