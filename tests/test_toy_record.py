"""Recording with the trained toy model: the record is the model's own numbers — its learned
embedding rows, its block, its prediction — checked against independent recomputations."""

import math
import warnings

import pytest
import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file
from torch.nn import functional as F

from blockviz.architecture import TRAINED_TOY
from blockviz.block_record import BlockRecord
from blockviz.errors import BlockvizError
from blockviz.record_check import check_claims
from blockviz.record_fields import DECLARATION, UNEMBEDDING, fields_for
from blockviz.toy import PACKAGED
from blockviz.toy.folder import load_toy
from blockviz.toy.recording import UnknownWordsWarning, record_toy

SENTENCE = "The chicken didn't cross the road because it was too tired."


@pytest.fixture(scope="module")
def rec():
    return record_toy(SENTENCE)


@pytest.fixture(scope="module")
def toy():
    return load_toy(PACKAGED)


def test_embeddings_are_the_learned_tables_rows_looked_up_in_lower_case(rec, toy):
    ids = [toy.vocabulary.words.index(token.lower()) for token in rec.tokens]
    assert torch.equal(rec.embed, rec.params["W_E"][ids])
    assert torch.equal(rec.pos_embed, rec.params["W_pos"][: rec.n])
    assert torch.equal(rec.embed[0], rec.embed[5])  # "The" and "the": one row
    assert rec.tokens[:3] == ("The", "chicken", "didn") and rec.tokens[3] == "'t"  # labels as typed, blockviz's tokens


def test_the_prediction_is_the_final_layer_norm_and_the_unembedding_of_the_block_output(rec):
    resid_post = rec.resid_post.double()
    expected_ln = F.layer_norm(
        resid_post,
        (rec.config.d_model,),
        rec.params["ln_f.weight"].double(),
        rec.params["ln_f.bias"].double(),
        rec.config.ln_eps,
    )
    assert torch.allclose(rec.ln_f.double(), expected_ln, atol=1e-5)
    logits = expected_ln @ rec.params["W_U"].double()
    assert torch.allclose(rec.logits.double(), logits, atol=1e-4)
    assert torch.allclose(rec.probs.double(), torch.softmax(logits, -1), atol=1e-6)
    assert torch.allclose(rec.probs.sum(-1), torch.ones(rec.n), atol=1e-6)
    prediction = [entry.name for entry in DECLARATION if entry.when is UNEMBEDDING]
    assert prediction == ["ln_f_mean", "ln_f_centred", "ln_f_var", "ln_f_norm", "ln_f", "logits", "probs"]
    assert [spec.name for spec in rec.fields][-len(prediction) :] == prediction


def test_the_record_matches_a_batched_forward_pass_as_in_training(rec, toy):
    # Training runs the same Block on batches (…, n, d_model): a sentence in a padded batch gets
    # the numbers its record shows.
    ids = torch.tensor([[toy.vocabulary.words.index(t.lower()) for t in rec.tokens] + [0, 0], list(range(rec.n + 2))])
    with torch.no_grad():
        logits = toy.model(ids)
    assert torch.allclose(logits[0, : rec.n], rec.logits, atol=1e-5)


def test_source_names_the_model_and_its_vocabulary(rec, toy):
    assert rec.source.kind == "trained" and rec.source.describe() == toy.card["about"]
    assert rec.source.describe().startswith("trained: one block, ")
    assert rec.source.vocabulary == toy.vocabulary.words and rec.config.vocab_size == len(toy.vocabulary.words)


def test_the_architecture_is_the_trained_toy_models(rec):
    arch = rec.architecture
    assert (
        arch == TRAINED_TOY
        and arch.unembedding
        and arch.embedding == "table"
        and arch.learned_positions
        and arch.pre_norm
    )
    assert not arch.is_toy and not arch.model_layer
    assert [spec.name for spec in rec.fields] == [spec.name for spec in fields_for(arch)] == list(rec.tensors)


def test_the_record_is_what_it_claims(rec):
    check_claims(rec)  # embed = W_E's rows for the vocabulary's ids, the block and the prediction recomputed


@pytest.mark.parametrize(
    ("name", "index"), [("logits", (3, 5)), ("probs", (2, 1)), ("embed", (1, 0)), ("ln_f", (0, 0))]
)
def test_an_edited_field_is_named_when_loaded(rec, tmp_path, name, index):
    path = tmp_path / "rec.safetensors"
    rec.save(path)
    tensors = load_file(path)
    with safe_open(path, "pt") as handle:
        metadata = handle.metadata()
    tensors[name][index] += 0.5
    save_file(tensors, path, metadata=metadata)
    with pytest.raises(BlockvizError, match=f"field '{name}'"):
        BlockRecord.load(path)


def test_saved_and_loaded_bit_for_bit(rec, tmp_path):
    path = tmp_path / "rec.safetensors"
    rec.save(path)
    loaded = BlockRecord.load(path)
    assert (
        loaded.source == rec.source
        and loaded.config == rec.config
        and loaded.tokens == rec.tokens
        and loaded.architecture == rec.architecture
    )
    for name in [spec.name for spec in rec.fields]:
        assert torch.equal(loaded.tensors[name], rec.tensors[name]), name
    assert set(loaded.params) == set(rec.params)


def test_without_the_mask_the_same_weights_and_prediction_are_rerun(rec):
    open_rec = rec.counterpart(causal=False)
    assert torch.equal(open_rec.embed, rec.embed) and torch.equal(open_rec.mask, torch.zeros(rec.n, rec.n))
    assert torch.allclose(open_rec.probs.sum(-1), torch.ones(rec.n), atol=1e-6)
    assert torch.allclose(open_rec.logits[-1], rec.logits[-1], atol=1e-5)  # the last row sees every token either way
    assert not torch.allclose(
        open_rec.logits[0], rec.logits[0], atol=1e-3
    )  # the first row sees them only without the mask
    assert open_rec.counterpart(causal=True).fields == rec.fields


def test_an_unknown_word_is_the_unknown_token_with_one_warning_naming_it():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rec = record_toy("The zebra didn't cross the road because it was too Zorby.")
    messages = [str(w.message) for w in caught if issubclass(w.category, UnknownWordsWarning)]
    assert len(messages) == 1 and "'zebra', 'Zorby'" in messages[0]
    assert torch.equal(rec.embed[1], rec.params["W_E"][0]) and rec.tokens[1] == "zebra"


def test_a_sentence_only_of_unknown_words_is_refused():
    with pytest.raises(BlockvizError, match="no word of the sentence"):
        record_toy("zebras yodel")


def test_every_recorded_value_is_readable_with_two_decimals(rec):
    for name, tensor in rec.activations().items():
        finite = tensor[torch.isfinite(tensor)]
        assert float(finite.abs().max()) < 100, name


def test_the_seeded_record_function_refuses_a_trained_config(rec):
    from blockviz.block_record import record

    with pytest.raises(BlockvizError, match="vocab_size"):
        record("the cat sat", rec.config)


def test_fields_of_a_config_without_vocabulary_are_unchanged(rec):
    from dataclasses import replace

    assert fields_for(replace(rec.config, vocab_size=None))[-1].name == "resid_post"
    assert math.isclose(float(rec.weights.sum()), rec.config.n_heads * rec.n, rel_tol=1e-5)
