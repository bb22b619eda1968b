"""English words too common to name an entity on their own.

The name index (server/name_index.py) finds entities a text names. A one-word name that is also an
everyday word — a page titled "Search", a person called Will or Grace, a project called "build" —
would fire on every sentence that uses the word. Such a name counts only where the text treats it
as a name: written with a capital inside a sentence ("ask Grace", "the Search page"), never at a
sentence's start, never in lower case. Names of two or more words are told apart by their words
together ("Monday Review"), so they count in lower case too unless every word is here.

The list: function words, pronouns, auxiliaries, days and months, numbers, greetings, and the
commonest verbs, nouns and adjectives of everyday English and of programming talk. It errs on the
side of listing a word: a listed word still names its entity when capitalised mid-sentence.
Folded as the name index folds (lower case, no accents).
"""

from __future__ import annotations

_WORDS = """
a about above across after again against ago ahead all almost alone along already also although always am
among an and another any anybody anyone anything anyway anywhere apart are around as ask asked asking at
away back be became because become been before began begin behind being below beside besides best better
between beyond both bring brought but by call came can cannot could did do does doing done down during each
either else enough even ever every everybody everyone everything everywhere except far few for from further
get gets getting give given gives go goes going gone got had has have having he her here hers herself him
himself his how however i if in inside instead into is it its itself just keep kept know known knows last
least less let like likely made make makes making many may maybe me might mine more most much must my myself
near need needs neither never new next no nobody none nor not nothing now nowhere of off often oh ok okay old
on once one only onto or other others otherwise our ours ourselves out over own per perhaps please put quite
rather really right said same saw say says see seem seems seen shall she should since so some somebody
someone something sometimes somewhere soon still such sure take taken than thank thanks that the their theirs
them themselves then there therefore these they thing things think this those though through thus till to
together too took toward towards under unless until up upon us use used uses using very via want wants was
way we well went were what whatever when whenever where wherever whether which while who whoever whole whom
whose why will with within without won't would yes yet you your yours yourself yourselves
i'm i've i'll i'd you're you've you'll you'd he's she's it's we're we've we'll they're they've they'll
that's there's here's what's who's let's don't doesn't didn't can't couldn't shouldn't wouldn't isn't aren't
wasn't weren't haven't hasn't hadn't
monday tuesday wednesday thursday friday saturday sunday today tomorrow yesterday tonight morning afternoon
evening night day days week weeks weekend month months year years hour hours minute minutes second seconds
time times date dates moment spring summer autumn fall winter
january february march april may june july august september october november december
zero two three four five six seven eight nine ten eleven twelve twenty thirty hundred thousand million
first third fourth fifth half double single
hi hello hey bye goodbye morning cheers sorry welcome yeah yep nope hmm ah wow great cool nice fine good bad
able add added adds agree allow answer apply approve arrive bear beat become begin believe belong blame block
book borrow break build builds building built buy call calls care carry catch change changed changes check
checked checks choose clean clear close closed come comes coming commit compare complete consider contain
continue control cook copy cost count cover create created creates cut deal decide define delete deliver
depend deploy describe design detect develop die dig discuss do draft draw dream dress drink drive drop earn
eat edit enable end enjoy ensure enter explain face fail fails failed fall feel fetch fight fill find finish
fit fix fixed fixes fly follow forget form found free generate give grab grow guess handle hang happen hate
head hear help hide hit hold hope hurt improve include increase install join jump keep kill kiss land laugh
lay lead learn leave lend lie lift light limit link list listen live load lock log look lose love lower make
manage mark match matter mean measure meet merge mind miss move name note notice offer open order own paint
pass pay pick place plan play point prefer prepare present press print promise prove provide publish pull
push raise reach read ready receive recall record reduce refer refactor release remain remember remove rename
repeat replace reply report request require reset rest restore return review ride ring rise roll rule run
runs running save scan search sell send serve set settle shake share shift ship shoot show shut sign sing sit
skip sleep slide smile solve sort speak spend split stand start stay step stick stop store study submit
suggest supply support suppose swim switch sync talk teach tear tell test tests tested thank throw touch
track trade train travel treat trust try turn type understand undo update upgrade upload view visit wait
wake walk warn wash watch wear win wish wonder work works worked working worry wrap write writes written
wrong chase dash grace frank max min sum avg
account action address age agent air amount api app area arm art article attention audience author bank bar
base bed bill bit black blue board body bone bot box boy branch brother budget bug business button cache
camera cancer capital car card career case cat cause center centre chair chance chapter character charge
child children choice church city class client code coffee cold college color colour column company config
content context country couple course court crash cup customer dad danger data database deal death debt
decision default degree demo department design detail development diff disk doctor document dog door dream
drive earth east economy edge education effect effort election email energy engine error event evidence
example eye fact factor family father fear feature feedback field figure file film fire fish floor flow
focus food foot force form friend front fruit fun function fund future game garden gas girl glass goal gold
government grade green ground group growth guide guy hair hand health heart heat history hole home horse
hospital host hotel house idea image impact index industry info information input insurance interest
internet issue item job joy key kid kind king kitchen lab lake land language law lawyer layer leader left
leg letter level library life line list loan location loop lot machine main manager map market master
material math meal media meeting member memory message method middle mile military milk mind mode model
mom money monitor mother mountain mouth movie music nation nature network news night node north number
object office oil order output owner package page pain pair paper parent park part party patch path patient
pattern peace people period person phone photo picture piece pipeline place plant plate player pocket poem
point police policy pool port position post power practice president pressure price prime problem process
product profile program progress project property prompt proof pull purpose quality query question queue
race radio rain range rate reason record region release report research resource response rest result
river road rock role room root rose round route row rule safety sale salt scale scene school science score
screen script sea season seat section security seed sense series server service session shape share shop
side sign signal site size skill sky snow society software son sound source south space speech speed
spirit sport spring staff stage star state station status step stock stone store story street stream
strength string student stuff style subject success sugar summary sun support surface system table tag
target task tax tea team term test text theory thought ticket title tool top topic town track trade
traffic training tree trial trip truth tv unit user value version video view village voice volume wall
war water wave weather web website weight west wind window wine wood word work worker world worth writer
yard youth zone
able active actual alive average aware basic beautiful big bitter black blank blind bold bottom brave
brief bright broad broken brown busy calm careful central cheap chief civil classic clean clear close
common complete complex correct crazy critical current cute daily dark dead dear deep direct dirty due
dry early easy empty entire equal exact extra fair false famous fast fat final fine firm flat foreign
formal former fresh full funny general gentle giant glad global gold grand grave gray grey happy hard
heavy high holy honest hot huge human ideal ill important inner just kind large late legal light little
live local long lost loud low lucky main major male manual mean minor missing modern moral native
natural nearby neat negative nervous nice noble normal obvious odd official open orange ordinary
original pale perfect plain plastic pleasant polite poor popular positive possible pretty previous
primary prime private proper proud public pure purple quick quiet rapid rare raw real recent red
regular rich rough round royal rude sad safe scared secret senior serious sharp short shy sick silent
silly similar simple slow small smart smooth soft solid special square stable steady steep stiff
straight strange strict strong stupid sudden super sweet tall thick thin tight tiny total tough
true typical ugly unique upper urgent useful usual valid various vast warm weak weird west wet white
whole wide wild wise wooden young
also bug bugs fix fixes todo done wip ci cd pr prs repo repos readme docs doc dev prod staging beta
alpha stable nightly latest legacy backend frontend server client api cli gui sdk json yaml http https
url uri sql css html js ts null true false none undefined
"""
COMMON_WORDS = frozenset(_WORDS.split())
