-- Counts behind the median racialized subordination ratio (METHOD.md §6), one row per model (and var
-- all_models_label), gender (female, male), race, domain and threshold t in var racialized_threshold_min ..
-- racialized_threshold_max:
--   subordinate_numerator(t) / dominant_numerator(t): whole counts of characters of that gender in the
--     domain's subordinate / dominant roles whose name has weight p_r > t / 100;
--   subordinate_denominator / dominant_denominator: all characters of that gender with race in those roles
--     (the same for every t and race). "Name" and "with race": the first name, or the surname where no first
--     name matched under var race_name_source = first_then_surname (has_race, docs/RACE_NAMES.md).
-- Set-based: characters are first reduced to distinct (cell, weights) rows, each weight to the highest t it
-- exceeds, and N(t) is the number of characters whose highest t is >= t.

with characters as (

    select
        model, domain, condition, gender,
        {%- for race in measure_race_codes() %}
            coalesce({{ race_weight_column(race) }}, 0) as {{ race_weight_column(race) }}{% if not loop.last %}
            ,
            {% endif %}
    {%- endfor %}
    from {{ ref('int_characters_joined') }}
    where
        condition in ('subordinate', 'dominant')
        and gender in {{ sql_in_list(racialized_gender_codes()) }}
        and has_race
        and {{ in_selected_versions('story_id') }}  -- the model versions the measures use (docs/RUNS.md)

),

distinct_weights as (

    select
        model, domain, condition, gender,
        {%- for race in measure_race_codes() %}
            {{ race_weight_column(race) }},
        {%- endfor %}
        count(*) as characters
    from characters
    group by
        model, domain, condition, gender
        {%- for race in measure_race_codes() %}, {{ race_weight_column(race) }}{% endfor %}

),

races as (
    {{ codes_relation(measure_race_codes(), 'race') }}
),

weights_by_race as (

    select
        distinct_weights.model,
        distinct_weights.domain,
        distinct_weights.condition,
        distinct_weights.gender,
        races.race,
        case races.race
            {%- for race in measure_race_codes() %}
                when '{{ race }}' then distinct_weights.{{ race_weight_column(race) }}
            {%- endfor %}
        end as weight,
        distinct_weights.characters
    from distinct_weights
    cross join races

),

histogram_per_model as (

    select
        model,
        domain,
        gender,
        race,
        {{ highest_threshold_below('weight') }} as highest_threshold,
        sum(case when condition = 'subordinate' then characters else 0 end) as subordinate_characters,
        sum(case when condition = 'dominant' then characters else 0 end) as dominant_characters
    from weights_by_race
    where weight > 0
    group by model, domain, gender, race, {{ highest_threshold_below('weight') }}

),

histogram as (

    select * from histogram_per_model
    union all
    select
        cast('{{ var("all_models_label") }}' as string) as model,
        domain,
        gender,
        race,
        highest_threshold,
        sum(subordinate_characters) as subordinate_characters,
        sum(dominant_characters) as dominant_characters
    from histogram_per_model
    group by domain, gender, race, highest_threshold

),

denominators_per_model as (

    select
        model,
        domain,
        gender,
        sum(case when condition = 'subordinate' then characters else 0 end) as subordinate_denominator,
        sum(case when condition = 'dominant' then characters else 0 end) as dominant_denominator
    from distinct_weights
    group by model, domain, gender

),

denominators as (

    select * from denominators_per_model
    union all
    select
        cast('{{ var("all_models_label") }}' as string) as model,
        domain,
        gender,
        sum(subordinate_denominator) as subordinate_denominator,
        sum(dominant_denominator) as dominant_denominator
    from denominators_per_model
    group by domain, gender

),

thresholds as (

    select cast(generated_number as integer) as threshold
    from ({{ dbt.generate_series(var('racialized_threshold_max')) }}) as series
    where generated_number >= {{ var('racialized_threshold_min') }}

),

spine as (

    select
        denominators.model, denominators.domain, denominators.gender, races.race, thresholds.threshold,
        denominators.subordinate_denominator, denominators.dominant_denominator
    from denominators
    cross join races
    cross join thresholds

)

select
    spine.model,
    spine.gender,
    spine.race,
    spine.domain,
    spine.threshold,
    cast(coalesce(sum(histogram.subordinate_characters), 0) as bigint) as subordinate_numerator,
    cast(spine.subordinate_denominator as bigint) as subordinate_denominator,
    cast(coalesce(sum(histogram.dominant_characters), 0) as bigint) as dominant_numerator,
    cast(spine.dominant_denominator as bigint) as dominant_denominator
from spine
left join histogram
    on
        spine.model = histogram.model
        and spine.domain = histogram.domain
        and spine.gender = histogram.gender
        and spine.race = histogram.race
        and spine.threshold <= histogram.highest_threshold
group by
    spine.model, spine.gender, spine.race, spine.domain, spine.threshold,
    spine.subordinate_denominator, spine.dominant_denominator
